package thumbnail

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// screenshots serves img for every key, counting the calls; release, when
// set, holds each call until it is closed.
type screenshots struct {
	img     []byte
	err     error
	calls   atomic.Int32
	started chan struct{}
	release chan struct{}
}

func (s *screenshots) Screenshot(context.Context, system.Key) ([]byte, error) {
	s.calls.Add(1)
	if s.started != nil {
		select {
		case s.started <- struct{}{}:
		default: // the test waits for the first call only
		}
	}
	if s.release != nil {
		<-s.release
	}
	return s.img, s.err
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var vm1 = system.Key{Namespace: "team-a", Name: "vm1"}

// TestCacheOnePerTTL: callers within TTL share one screenshot, those
// asking while it is taken wait for it; after TTL virt-api is asked again.
func TestCacheOnePerTTL(t *testing.T) {
	src := &screenshots{img: pngOf(t, 8, 8), started: make(chan struct{}, 1), release: make(chan struct{})}
	c := New(src)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }

	var wg sync.WaitGroup
	results := make([][]byte, 5)
	wg.Go(func() { results[0], _ = c.Thumbnail(t.Context(), vm1) })
	<-src.started // the first caller is taking the screenshot
	for i := 1; i < len(results); i++ {
		wg.Go(func() { results[i], _ = c.Thumbnail(t.Context(), vm1) })
	}
	close(src.release)
	wg.Wait()
	for i, r := range results {
		if !bytes.Equal(r, src.img) {
			t.Errorf("caller %d got %d bytes, want the screenshot", i, len(r))
		}
	}
	if n := src.calls.Load(); n != 1 {
		t.Errorf("%d screenshots for callers within one TTL, want 1", n)
	}
	src.started = nil
	now = now.Add(TTL)
	if _, err := c.Thumbnail(t.Context(), vm1); err != nil || src.calls.Load() != 2 {
		t.Errorf("after TTL: %v, %d screenshots, want a second", err, src.calls.Load())
	}
}

// TestCacheRefuses: a System that is not running is ErrNotRunning (also
// cached for TTL); a non-PNG or an oversized PNG is ErrNotPNG.
func TestCacheRefuses(t *testing.T) {
	notRunning := &screenshots{err: apierrors.NewBadRequest("VMI is not running")}
	c := New(notRunning)
	for range 2 {
		if _, err := c.Thumbnail(t.Context(), vm1); !errors.Is(err, ErrNotRunning) {
			t.Errorf("not running: %v, want ErrNotRunning", err)
		}
	}
	if n := notRunning.calls.Load(); n != 1 {
		t.Errorf("%d screenshots of a stopped System within TTL, want 1", n)
	}
	for name, img := range map[string][]byte{"html": []byte("<html>"), "huge": pngOf(t, 4097, 4096)} {
		if _, err := New(&screenshots{img: img}).Thumbnail(t.Context(), vm1); !errors.Is(err, ErrNotPNG) {
			t.Errorf("%s: %v, want ErrNotPNG", name, err)
		}
	}
}
