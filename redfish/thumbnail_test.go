package redfish

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// fakeThumbnails records the Systems whose thumbnail was asked for.
type fakeThumbnails struct {
	asked   []system.Key
	stopped bool // answer as for a System that is not running
}

func (f *fakeThumbnails) Thumbnail(_ context.Context, key system.Key) ([]byte, error) {
	f.asked = append(f.asked, key)
	if f.stopped {
		return nil, fmt.Errorf("thumbnail of %s: not running: %w", key, ErrConflict)
	}
	return []byte("\x89PNG of " + key.Name), nil
}

// TestThumbnail: a System's thumbnail is its PNG, never cached, for a
// session or Basic credentials in scope; a scoped-away user gets the same
// 404 as for a missing System and virt-api is not asked; a System that is
// not running is 409; without thumbnails the path is 404.
func TestThumbnail(t *testing.T) {
	e := newEnv(t)
	ft := &fakeThumbnails{}
	b := backendsOf(e.fake, e.auth)
	b.Thumbnails = ft
	srv, ech, err := newServer(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666", Version: "1.0.0", Logger: slog.New(slog.DiscardHandler)}, b)
	if err != nil {
		t.Fatal(err)
	}
	plain := newEnv(t)
	e.srv, e.e = srv, ech
	const path = "/redfish/v1/Systems/team-a.vm1" + thumbnailPath

	token, _ := login(t, e, "alice", "alice-pw")
	rec := e.do(t, req{method: http.MethodGet, path: path, token: token})
	if rec.Code != http.StatusOK || rec.Body.String() != "\x89PNG of vm1" {
		t.Fatalf("thumbnail: %d %q", rec.Code, rec.Body)
	}
	if h := rec.Header(); h.Get("Content-Type") != "image/png" || h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("thumbnail headers %v", h)
	}
	if rec := e.do(t, req{method: http.MethodGet, path: path, user: "alice"}); rec.Code != http.StatusOK {
		t.Errorf("Basic credentials: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do(t, req{method: http.MethodGet, path: path}); rec.Code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d %s, want 401", rec.Code, rec.Body)
	}

	asked := len(ft.asked)
	bobToken, _ := login(t, e, "bob", "bob-pw")
	out := e.do(t, req{method: http.MethodGet, path: path, token: bobToken})
	absent := e.do(t, req{method: http.MethodGet, path: "/redfish/v1/Systems/team-a.vm9" + thumbnailPath, token: bobToken})
	if out.Code != http.StatusNotFound || absent.Code != http.StatusNotFound {
		t.Errorf("scoped away: %d, absent: %d, want 404 both", out.Code, absent.Code)
	}
	if out.Header().Get("Content-Type") == "image/png" || len(ft.asked) != asked {
		t.Errorf("a scoped-away user's request reached the screenshots: %v", ft.asked[asked:])
	}

	ft.stopped = true
	if rec := e.do(t, req{method: http.MethodGet, path: path, token: token}); rec.Code != http.StatusConflict {
		t.Errorf("not running: %d %s, want 409", rec.Code, rec.Body)
	}
	if rec := plain.do(t, req{method: http.MethodGet, path: path, user: "alice"}); rec.Code != http.StatusNotFound {
		t.Errorf("without thumbnails: %d %s, want 404", rec.Code, rec.Body)
	}
}
