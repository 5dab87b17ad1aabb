package service

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestConnectionSharesTenantRedials performs the attack of
// docs/reliability.md row 114: an authenticated tenant keeps more
// keep-alive connections than the cap from 127.0.0.2, asking on each, and
// dials again whatever is closed or refused. The administrator from
// 127.0.0.1 must be answered on every fresh connection and on a kept one
// while the flood is held (ordering, not time: see answerDeadline), and
// the listener never holds more than the cap.
func TestConnectionSharesTenantRedials(t *testing.T) {
	const limit = 64
	ctx := t.Context()
	addr, ln := cappedTLSServer(t, limit)
	tenant := testutil.Redial(t, limit+limit/4, tlsDialFrom(addr, "127.0.0.2"), "/redfish/v1/Systems",
		http.Header{"Authorization": {"Bearer tenant"}}, 200*time.Millisecond)
	if err := tenant.WaitAnswered(ctx, limit); err != nil {
		t.Fatal(err)
	}

	t.Run("fresh connections answered", func(t *testing.T) {
		c := clientFrom(t, "127.0.0.1", true, answerDeadline)
		for i := range 20 {
			if took, err := timedGet(ctx, c, addr, "Bearer admin"); err != nil {
				t.Fatalf("request %d on a fresh connection under the tenant's flood: %v after %v", i, err, took)
			}
		}
	})
	t.Run("kept connection answered", func(t *testing.T) {
		c := clientFrom(t, "127.0.0.1", false, answerDeadline)
		for i := range 20 {
			var reused bool
			tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
			if took, err := timedGet(tctx, c, addr, "Bearer admin"); err != nil {
				t.Fatalf("request %d on a kept connection under the tenant's flood: %v after %v", i, err, took)
			}
			if i > 0 && !reused {
				t.Errorf("request %d: the kept connection was closed, a new one dialed", i)
			}
		}
	})
	t.Logf("tenant: %d dials, %d connections lost, %d answers; listener peak %d of %d",
		tenant.Dials.Load(), tenant.Lost.Load(), tenant.Answers.Load(), ln.Peak(), limit)
	if n := ln.Peak(); n > limit {
		t.Errorf("listener held %d connections at once, limit %d", n, limit)
	}
}

// TestConnectionSharesHandshakeFlood performs the attack of
// docs/reliability.md row 115 at the default cap: an honest client from
// 127.0.0.1 holds 47 keep-alive connections (24 authenticated, 23 that
// made only an unauthenticated request, as sushy's first GET of the
// service root), then 1000 TCP connections from 1000 loopback addresses
// open and never send a byte (TLS handshakes that never finish). Every
// honest connection must still be answered, a fresh one too, and the
// listener never holds more than the cap.
func TestConnectionSharesHandshakeFlood(t *testing.T) {
	const limit, honest, flood = DefaultMaxConnections, 47, 1000
	ctx := t.Context()
	addr, ln := cappedTLSServer(t, limit)
	authorization := func(i int) string {
		if i%2 == 0 {
			return "Bearer admin"
		}
		return ""
	}
	kept := make([]*keptConn, honest)
	for i := range kept {
		kept[i] = dialKept(ctx, t, addr, "127.0.0.1")
		if err := kept[i].ask(authorization(i)); err != nil {
			t.Fatalf("honest connection %d before the flood: %v", i, err)
		}
	}
	for i := range flood {
		testutil.HoldIdle(t, addr, fmt.Sprintf("127.1.%d.%d", i/200, i%200+1), 1)
	}
	lost := 0
	for i, c := range kept {
		if err := c.ask(authorization(i)); err != nil {
			lost++
			t.Errorf("honest connection %d (authorization %q) after %d handshakes from %d addresses: %v", i, authorization(i), flood, flood, err)
		}
	}
	c := clientFrom(t, "127.0.0.1", true, answerDeadline)
	if took, err := timedGet(ctx, c, addr, "Bearer admin"); err != nil {
		t.Errorf("fresh connection after the flood: %v after %v", err, took)
	}
	t.Logf("%d of %d honest connections lost to %d never-finishing handshakes; listener peak %d of %d",
		lost, honest, flood, ln.Peak(), limit)
	if n := ln.Peak(); n > limit {
		t.Errorf("listener held %d connections at once, limit %d", n, limit)
	}
}

// keptConn is a keep-alive HTTP/1.1 connection over TLS asked by hand.
type keptConn struct {
	c net.Conn
	r *bufio.Reader
}

// dialKept dials addr from src over TLS and keeps the connection until
// the test ends.
func dialKept(ctx context.Context, t *testing.T, addr, src string) *keptConn {
	t.Helper()
	c, err := tlsDialFrom(addr, src)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &keptConn{c: c, r: bufio.NewReader(c)}
}

// ask GETs /redfish/v1/Systems on k with authorization (none if "") and
// wants 204; the server closing k is an error.
func (k *keptConn) ask(authorization string) error {
	_ = k.c.SetDeadline(time.Now().Add(answerDeadline))
	req, err := http.NewRequest(http.MethodGet, "https://bridge/redfish/v1/Systems", nil) // written by hand
	if err != nil {
		return err
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if err := req.Write(k.c); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(k.r, req)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("connection closed by the server: %w", err)
		}
		return fmt.Errorf("read: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
