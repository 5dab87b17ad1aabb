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
	"slices"
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
		tenant.Dials.Load(), tenant.Lost.Load(), tenant.Answers.Load(), ln.peakConns(), limit)
	if n := ln.peakConns(); n > limit {
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
		lost, honest, flood, ln.peakConns(), limit)
	if n := ln.peakConns(); n > limit {
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

// TestVictimOrder: which connection a full listener closes for a new one
// (victimLocked's order), and that it refuses the new one rather than
// close a connection of a user within its share.
func TestVictimOrder(t *testing.T) {
	type conn struct {
		addr, user string
		state      http.ConnState
	}
	idle := func(addr string) conn { return conn{addr: addr, state: http.StateIdle} }
	handshake := func(addr string) conn { return conn{addr: addr, state: http.StateNew} }
	user := func(name string, s http.ConnState) conn { return conn{addr: "10.0.0.9", user: name, state: s} }
	for _, tc := range []struct {
		name  string
		open  []conn // oldest first
		from  string // the new connection's address
		close int    // index into open; -1: the new connection is refused
	}{
		{"an unfinished handshake before idle connections of an address holding more",
			[]conn{idle("a"), idle("a"), handshake("b"), user("admin", http.StateIdle)}, "c", 2},
		{"a user over its share before a handshake of an address within its share",
			[]conn{user("tenant", http.StateIdle), user("tenant", http.StateActive), user("tenant", http.StateActive), handshake("b")}, "c", 0},
		{"an address over its share closes its own oldest handshake, not an older one of another",
			[]conn{handshake("b"), handshake("a"), handshake("a"), user("admin", http.StateIdle)}, "a", 1},
		{"an over-share user's idle connection before its busy ones",
			[]conn{user("t", http.StateActive), user("t", http.StateIdle), user("t", http.StateActive), user("admin", http.StateIdle)}, "c", 1},
		{"an idle connection of the address most over its share before an older one of another",
			[]conn{idle("b"), idle("a"), idle("a"), idle("a")}, "c", 1},
		{"every connection a user's within its share: the new one is refused",
			[]conn{user("a", http.StateIdle), user("b", http.StateIdle), user("c", http.StateIdle), user("d", http.StateIdle)}, "e", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLimitListener(nil, len(tc.open))
			var conns []*limitConn
			for i, o := range tc.open {
				c := &limitConn{l: l, addr: o.addr}
				c.active.Store(int64(i)) // the older, the less recently active
				if _, ok := l.admit(c); !ok {
					t.Fatalf("connection %d not admitted below the cap", i)
				}
				c.state.Store(int64(o.state))
				if o.user != "" {
					c.markAuthenticated(o.user)
					c.active.Store(int64(i))
				}
				conns = append(conns, c)
			}
			victims, admitted := l.admit(&limitConn{l: l, addr: tc.from})
			got := -1
			if len(victims) == 1 {
				got = slices.Index(conns, victims[0])
			}
			if admitted != (tc.close >= 0) || len(victims) > 1 || got != tc.close {
				t.Errorf("closed %d of %d open (index %d), admitted %t; want index %d (-1: the new one refused)",
					len(victims), len(conns), got, admitted, tc.close)
			}
			if n := l.openConns(); n != len(tc.open) {
				t.Errorf("%d open after admitting, want the cap %d", n, len(tc.open))
			}
		})
	}
}
