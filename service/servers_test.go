package service

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// TestServeTLSAndHeaderLimits: the HTTPS server refuses TLS 1.2 CBC-SHA1
// suites, answers 431 to an HTTP/1 header over the limit and advertises
// the limit to HTTP/2 clients.
func TestServeTLSAndHeaderLimits(t *testing.T) {
	var wg sync.WaitGroup
	ctx := t.Context()
	serverTLS := testServerTLS(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	addr, err := serve(logctx.Into(ctx, slog.New(slog.DiscardHandler)), &wg, "test", "127.0.0.1:0", h, serverTLS,
		Limits{}, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wg.Wait)
	dial := func(suite uint16) error {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12, // the test's own certificate
			CipherSuites: []uint16{suite}})
		if err == nil {
			_ = c.Close()
		}
		return err
	}
	for _, s := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256} {
		if err := dial(s); err == nil {
			t.Errorf("TLS 1.2 with %s accepted", tls.CipherSuiteName(s))
		}
	}
	if err := dial(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256); err != nil {
		t.Errorf("TLS 1.2 with ECDHE-ECDSA-AES128-GCM-SHA256: %v", err)
	}
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: proto == "HTTP/2.0"} // the test's own certificate
		if proto == "HTTP/1.1" {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		for _, size := range []int{1 << 10, 2 * DefaultMaxHeaderBytes} {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/redfish/v1", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Pad", strings.Repeat("a", size))
			resp, err := hc.Do(req)
			ok := err == nil && resp.StatusCode == http.StatusNoContent
			if err == nil {
				_ = resp.Body.Close()
				if resp.Proto != proto {
					t.Errorf("%s: answered over %s", proto, resp.Proto)
				}
			}
			if want := size < DefaultMaxHeaderBytes; ok != want {
				t.Errorf("%s with a %d-byte header: served %t (err %v), want %t", proto, size, ok, err, want)
			}
		}
		tr.CloseIdleConnections()
	}
}

// TestHSTS: every HTTPS answer carries Strict-Transport-Security, also
// an error the handler writes; a plain HTTP answer does not.
func TestHSTS(t *testing.T) {
	var wg sync.WaitGroup
	ctx := t.Context()
	serverTLS := testServerTLS(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ctx = logctx.Into(ctx, slog.New(slog.DiscardHandler))
	tlsAddr, err := serve(ctx, &wg, "https", "127.0.0.1:0", h, serverTLS, Limits{}, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	plainAddr, err := serve(ctx, &wg, "http", "127.0.0.1:0", h, nil, Limits{}, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wg.Wait)
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // the test's own certificate
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, tc := range []struct{ url, want string }{
		{"https://" + tlsAddr + "/redfish/v1", "max-age=31536000"},
		{"https://" + tlsAddr + "/missing", "max-age=31536000"},
		{"http://" + plainAddr + "/redfish/v1", ""},
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := resp.Header.Get("Strict-Transport-Security"); got != tc.want {
			t.Errorf("GET %s: Strict-Transport-Security %q, want %q", tc.url, got, tc.want)
		}
	}
}

// serve runs a server part as the manager would, until ctx ends (wg
// waits for it), and returns its address; a serving error calls fail.
func serve(ctx context.Context, wg *sync.WaitGroup, name, addr string, h http.Handler, tlsCfg *tls.Config,
	limits Limits, fail func(error)) (string, error) {
	s := newServer(name, addr, h, tlsCfg, limits)
	errc := make(chan error, 1)
	wg.Go(func() {
		err := s.Start(ctx)
		errc <- err
		if err != nil {
			fail(err)
		}
	})
	ready := make(chan error, 1)
	go func() { ready <- s.WaitReady(ctx) }()
	select {
	case err := <-ready:
		if err != nil {
			return "", err
		}
		return s.Addr(), nil
	case err := <-errc:
		return "", err
	}
}

// testServerTLS is a server TLS config with a certificate of a throwaway
// CA (what the bridge serves with --tls-cert-file).
func testServerTLS(t *testing.T) *tls.Config {
	t.Helper()
	ca, err := testca.New("bridge")
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, err := ca.ServerTLS()
	if err != nil {
		t.Fatal(err)
	}
	return serverTLS
}
