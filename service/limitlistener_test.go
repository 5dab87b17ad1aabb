package service

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/internal/connshare"
)

// answerDeadline is how long a client waits for an answer under the
// flood: generous, as the test proves an order, not a speed. The flood's
// keep-alive connections ask again before any server timeout could free
// one (testutil.HoldKeepAlive) and are held until the test ends, so a
// client the cap locks out is never answered while they are held: served
// normally it is answered in milliseconds, locked out it waits out this
// deadline and fails.
const answerDeadline = 2 * time.Minute

// TestConnectionFlood performs the attacks of docs/reliability.md row 14 on a server
// capped at the default DefaultMaxConnections, over TLS: as many
// unauthenticated keep-alive connections from 127.0.0.2 that made one
// request each and ask again every few seconds, plus 1500 TCP connections from 127.0.0.3-5 that
// never send a byte. A client from 127.0.0.1 must still be answered on
// fresh connections while the flood is held (ordering, not time: the
// flood never lets a connection go by itself), the listener must hold at most
// the cap, and an authenticated keep-alive connection must survive a flood
// from its own address.
func TestConnectionFlood(t *testing.T) {
	const limit = DefaultMaxConnections
	ctx := t.Context()
	addr, ln := cappedTLSServer(t, limit)

	keepAlive := testutil.HoldKeepAlive(t, limit, func() (net.Conn, error) {
		return tlsDialFrom(addr, "127.0.0.2")(ctx)
	}, "/redfish/v1")
	for i, src := range []string{"127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		testutil.HoldIdle(t, addr, src, 500)
		t.Logf("flood: %d keep-alive connections answered, %d idle TCP connections opened; listener holds %d", keepAlive, (i+1)*500, ln.Open())
	}

	t.Run("fresh connections answered", func(t *testing.T) {
		c := clientFrom(t, "127.0.0.1", true, answerDeadline)
		for i := range 5 {
			took, err := timedGet(ctx, c, addr, "Bearer ok")
			t.Logf("request %d on a fresh connection: %v, err %v", i, took, err)
			if err != nil {
				t.Fatalf("request %d on a fresh connection under the flood: %v", i, err)
			}
		}
	})
	t.Run("authenticated connection survives its own address's flood", func(t *testing.T) {
		c := clientFrom(t, "127.0.0.1", false, answerDeadline)
		if _, err := timedGet(ctx, c, addr, "Bearer ok"); err != nil {
			t.Fatal(err)
		}
		testutil.HoldIdle(t, addr, "127.0.0.1", 2*limit)
		var reused bool
		tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
		if _, err := timedGet(tctx, c, addr, "Bearer ok"); err != nil || !reused {
			t.Errorf("after %d idle connections from its address: err %v, connection reused %t, want nil and true", 2*limit, err, reused)
		}
	})
	if n := ln.Peak(); n > limit {
		t.Errorf("listener held %d connections at once, limit %d", n, limit)
	}
}

// cappedTLSServer serves over TLS, through a connshare.Listener capped at
// limit (as serve builds it, the listener kept to count), a handler that
// answers 204 and authenticates a request carrying "Authorization: Bearer
// <user>" as user, as the redfish service does with credentials.
func cappedTLSServer(t *testing.T, limit int) (string, *connshare.Listener) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			markAuthenticated(r.Context(), user)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := connshare.New(tcp, limit)
	srv := &http.Server{Handler: h, TLSConfig: HardenTLS(testServerTLS(t)), ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: time.Minute, ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelWarn)}
	trackConns(srv)
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return tcp.Addr().String(), ln
}

// tlsDialFrom dials addr over TLS from the loopback address src.
func tlsDialFrom(addr, src string) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		d := tls.Dialer{NetDialer: testutil.FloodDialer(src), Config: &tls.Config{InsecureSkipVerify: true}} // the test's own certificate
		return d.DialContext(ctx, "tcp", addr)
	}
}

// clientFrom is an HTTPS client connecting from src, on a fresh connection
// for every request if fresh, giving up after timeout.
func clientFrom(t *testing.T, src string, fresh bool, timeout time.Duration) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	tr := &http.Transport{
		DialContext: d.DialContext, DisableKeepAlives: fresh,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the test's own certificate
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: timeout}
}

// timedGet GETs /redfish/v1/Systems with authorization and wants 204.
func timedGet(ctx context.Context, c *http.Client, addr, authorization string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/redfish/v1/Systems", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", authorization)
	start := time.Now()
	resp, err := c.Do(req)
	took := time.Since(start)
	if err != nil {
		return took, err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return took, fmt.Errorf("status %d", resp.StatusCode)
	}
	return took, nil
}
