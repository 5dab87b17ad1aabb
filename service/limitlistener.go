package service

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/redfish-bridge/redfish-bridge/internal/addrkey"
)

// limitListener keeps at most n connections open, TLS handshakes included,
// without letting unauthenticated clients lock the others out. A
// connection is unauthenticated until one of its requests authenticates
// ([markAuthenticated]). When a new connection would exceed n, Accept
// closes an unauthenticated one to make room: of the address holding the
// most unauthenticated connections, the oldest without a request in
// progress, else its oldest. Only while every open connection is
// authenticated does Accept wait for one to close (the kernel queues the
// rest). So unauthenticated or idle connections from one address (an IPv6
// /64 counts as one) cost a client from another address nothing, however
// many they are; they cost a client from the same address only while it
// has not authenticated yet.
type limitListener struct {
	net.Listener
	n int

	mu     sync.Mutex
	closed bool
	open   int
	// unauth are the unauthenticated connections of each address, oldest
	// first.
	unauth map[string][]*limitConn
	freed  *sync.Cond // signalled when open drops
}

func newLimitListener(l net.Listener, n int) *limitListener {
	ll := &limitListener{Listener: l, n: n, unauth: map[string][]*limitConn{}}
	ll.freed = sync.NewCond(&ll.mu)
	return ll
}

func (l *limitListener) Accept() (net.Conn, error) {
	if err := l.waitRoom(); err != nil {
		return nil, err
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitConn{Conn: c, l: l, addr: addrKey(c.RemoteAddr())}
	l.mu.Lock()
	var victims []*limitConn
	for l.open >= l.n {
		v := l.victimLocked()
		if v == nil {
			break // became authenticated meanwhile: one over n, briefly
		}
		l.releaseLocked(v)
		victims = append(victims, v)
	}
	l.open++
	l.unauth[lc.addr] = append(l.unauth[lc.addr], lc)
	l.mu.Unlock()
	for _, v := range victims {
		_ = v.Conn.Close() // the server's goroutine sees the error and ends
	}
	return lc, nil
}

// waitRoom returns once a connection may be accepted: fewer than n are
// open, or one of them is unauthenticated and may be closed.
func (l *limitListener) waitRoom() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.closed && l.open >= l.n && len(l.unauth) == 0 {
		l.freed.Wait()
	}
	if l.closed {
		return net.ErrClosed
	}
	return nil
}

// victimLocked is the connection to close for a new one ([limitListener]),
// nil when every open connection is authenticated.
func (l *limitListener) victimLocked() *limitConn {
	var most []*limitConn
	for _, cs := range l.unauth {
		if len(cs) > len(most) {
			most = cs
		}
	}
	for _, c := range most {
		if http.ConnState(c.state.Load()) != http.StateActive {
			return c
		}
	}
	if len(most) > 0 {
		return most[0]
	}
	return nil
}

// releaseLocked stops counting c (once).
func (l *limitListener) releaseLocked(c *limitConn) {
	if c.released {
		return
	}
	c.released = true
	l.open--
	l.forgetLocked(c)
	l.freed.Signal()
}

// forgetLocked removes c from the unauthenticated connections.
func (l *limitListener) forgetLocked(c *limitConn) {
	cs := l.unauth[c.addr]
	if i := slices.Index(cs, c); i >= 0 {
		cs = slices.Delete(cs, i, i+1)
		if len(cs) == 0 {
			delete(l.unauth, c.addr)
		} else {
			l.unauth[c.addr] = cs
		}
	}
}

func (l *limitListener) Close() error {
	l.mu.Lock()
	l.closed = true
	l.freed.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// addrKey is the address a connection's peer counts under: its IP, an
// IPv6 address's /64 (what one host is usually given), as the login
// throttle counts it ([addrkey.FromAddr]).
func addrKey(a net.Addr) string { return addrkey.FromAddr(a) }

// limitConn is a connection of a limitListener.
type limitConn struct {
	net.Conn
	l    *limitListener
	addr string
	// state is the http.ConnState the server last reported.
	state atomic.Int32
	// released and authenticated are guarded by l.mu.
	released, authenticated bool
}

// Close closes the connection and frees its place.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return err
}

// markAuthenticated exempts c from being closed for new connections.
func (c *limitConn) markAuthenticated() {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if c.authenticated || c.released {
		return
	}
	c.authenticated = true
	c.l.forgetLocked(c)
}

// limitConnOf is the limitConn under c (a *tls.Conn's included), or nil.
func limitConnOf(c net.Conn) *limitConn {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn()
	}
	lc, _ := c.(*limitConn)
	return lc
}

// connKey carries a request's limitConn in its context.
type connKey struct{}

// trackConns makes srv report its connections' states and contexts to the
// limitListener they came from.
func trackConns(srv *http.Server) {
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if lc := limitConnOf(c); lc != nil {
			return context.WithValue(ctx, connKey{}, lc)
		}
		return ctx
	}
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		if lc := limitConnOf(c); lc != nil {
			lc.state.Store(int32(s))
		}
	}
}

// markAuthenticated records that a request with context ctx (served by
// [serve]) authenticated, so that its connection is never closed to make
// room for another: the redfish.Config.Authenticated hook.
func markAuthenticated(ctx context.Context) {
	if lc, ok := ctx.Value(connKey{}).(*limitConn); ok {
		lc.markAuthenticated()
	}
}
