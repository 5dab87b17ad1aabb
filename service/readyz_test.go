package service_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/service"
)

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestReadyzWaitsForCaches holds the bridge's VMI informer at its first
// request (the apiserver "slow" to stream the VMIs) on a real apiserver:
// /readyz answers 503 with the reason while the informer has not synced,
// and 200 once every cache synced and Start returned.
func TestReadyzWaitsForCaches(t *testing.T) {
	c, ns := seededStock(t)
	ctx := t.Context()
	held, release := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(open)
	cfg := rest.CopyConfig(c.Bridge)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/virtualmachineinstances") {
				holdOnce.Do(func() { close(held) })
				select {
				case <-release:
				case <-req.Context().Done():
					return nil, req.Context().Err()
				}
			}
			return next.RoundTrip(req)
		})
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := l.Addr().String()
	l.Close()

	type started struct {
		r   *service.Running
		err error
	}
	done := make(chan started, 1)
	bctx, cancel := context.WithCancel(ctx)
	go func() {
		bcfg := bridgeConfig(c, cfg, ns, "readyz")
		bcfg.MetricsListen = metricsAddr
		r, err := service.Start(bctx, bcfg)
		done <- started{r, err}
	}()
	t.Cleanup(func() {
		cancel()
		if s := <-done; s.r != nil {
			_ = s.r.Wait()
		}
	})
	select {
	case <-held:
	case s := <-done:
		done <- s
		t.Fatalf("Start returned (%v) before the VMI informer made a request", s.err)
	case <-time.After(waitTimeout):
		t.Fatal("the VMI informer made no request")
	}
	readyz := func() (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metricsAddr+"/readyz", nil)
		if err != nil {
			return 0, "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	var code int
	var body string
	testutil.Eventually(t, "the metrics listener to answer", waitTimeout, 50*time.Millisecond, func(context.Context) error {
		code, body, err = readyz()
		return err
	})
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "not synced") {
		t.Errorf("/readyz while the VMI cache has not synced: %d %q, want 503 caches not synced", code, body)
	}
	open()
	var s started
	select {
	case s = <-done:
		done <- s
	case <-time.After(waitTimeout):
		t.Fatal("Start did not return after the VMI informer was released")
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	if code, body, err := readyz(); err != nil || code != http.StatusOK {
		t.Errorf("/readyz after Start: %d %q %v, want 200", code, body, err)
	}
}
