package redfish

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

// TestAccessLogLevel checks who gets an access-log line at which level:
// successful reads at Debug only (an Info logger drops them), errors and
// writes at Info.
func TestAccessLogLevel(t *testing.T) {
	base := newEnv(t)
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		t.Run(level.String(), func(t *testing.T) {
			var sink lockedBuffer
			e, err := New(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666",
				Logger: slog.New(slog.NewTextHandler(&sink, &slog.HandlerOptions{Level: level}))},
				Backends{Systems: base.fake, Power: base.fake, Boot: base.fake, Media: base.fake, Trust: base.fake, Auth: base.auth})
			if err != nil {
				t.Fatal(err)
			}
			env := &env{fake: base.fake, e: e, auth: base.auth}
			for _, tc := range []struct {
				name string
				r    req
				want string // level of the line; "" for none
			}{
				{"GET 200", req{path: "/redfish/v1/Systems/team-a.vm1", user: "admin"}, "DEBUG"},
				{"HEAD 200", req{method: http.MethodHead, path: "/redfish/v1/Systems", user: "admin"}, "DEBUG"},
				{"GET 404", req{path: "/redfish/v1/Systems/team-a.nope", user: "admin"}, "INFO"},
				{"GET 401", req{path: "/redfish/v1/Systems/team-a.vm1"}, "INFO"},
				{"POST 204", req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset",
					body: `{"ResetType":"On"}`, user: "admin"}, "INFO"},
				{"PATCH 400", req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", body: `{"Boot":7}`, user: "admin"}, "INFO"},
			} {
				rec := env.do(t, tc.r)
				line := sink.take()
				want := tc.want
				if want == "DEBUG" && level > slog.LevelDebug {
					want = ""
				}
				got := ""
				if i := strings.Index(line, "level="); i >= 0 && strings.Contains(line, "msg=request") {
					got = strings.Fields(line[i+len("level="):])[0]
				}
				if got != want {
					t.Errorf("%s (status %d), logger at %s: access-log level %q, want %q; log: %q", tc.name, rec.Code, level, got, want, line)
				}
			}
		})
	}
}

// loggingPower is a backend that logs through the logger in its context.
type loggingPower struct{ Power }

func (p loggingPower) Reset(ctx context.Context, key system.Key, kind system.ResetType) error {
	logctx.From(ctx).Info("backend reset", "vm", key)
	return p.Power.Reset(ctx, key, kind)
}

// TestBackendLogsWithRequestID: what the backends log carries the request
// id, because the request's logger travels in the context (logctx).
func TestBackendLogsWithRequestID(t *testing.T) {
	base := newEnv(t)
	var sink lockedBuffer
	e, err := New(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666",
		Logger: slog.New(slog.NewTextHandler(&sink, nil))},
		Backends{Systems: base.fake, Power: loggingPower{base.fake}, Boot: base.fake, Media: base.fake, Trust: base.fake, Auth: base.auth})
	if err != nil {
		t.Fatal(err)
	}
	env := &env{fake: base.fake, e: e, auth: base.auth}
	rec := env.do(t, req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset",
		body: `{"ResetType":"On"}`, user: "admin", header: map[string]string{HeaderRequestID: "req-42"}})
	if rec.Code/100 != 2 {
		t.Fatalf("reset: %d %s", rec.Code, rec.Body)
	}
	var line string
	for _, l := range strings.Split(sink.take(), "\n") {
		if strings.Contains(l, "backend reset") {
			line = l
		}
	}
	if !strings.Contains(line, "request=req-42") {
		t.Errorf("the backend's line lacks the request id: %q", line)
	}
}
