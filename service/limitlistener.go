package service

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redfish-bridge/redfish-bridge/internal/addrkey"
)

// limitListener keeps at most n connections open, TLS handshakes included,
// and shares them out so that no user and no address locks the others
// out. Each open connection counts against one holder: its user once one
// of its requests authenticated ([markAuthenticated]), else its address (an
// IPv6 /64 counts as one). Accept never waits: when a new connection would
// exceed n it closes another, from whoever holds more than its share, a
// connection without a request yet (a TLS handshake in progress) first and
// an authenticated, recently active one last ([limitListener.victimLocked]
// has the order), or else the new connection itself. It never holds more
// than n.
type limitListener struct {
	net.Listener
	n int

	mu    sync.Mutex
	conns map[*limitConn]struct{}
	// unauth counts each address's unauthenticated connections, users
	// each user's authenticated ones.
	unauth, users map[string]int
	// accepted numbers the connections in the order they were accepted.
	accepted uint64
	// peak is the most connections ever open at once.
	peak int
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, n: n, conns: map[*limitConn]struct{}{},
		unauth: map[string]int{}, users: map[string]int{}}
}

// Accept returns the next connection the shares admit; a connection they
// do not admit is closed at once (the client sees its connection closed
// and may dial again).
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitConn{Conn: c, l: l, addr: addrKey(c.RemoteAddr())}
		lc.touch()
		victims, admitted := l.admit(lc)
		for _, v := range victims {
			_ = v.Conn.Close() // the server's goroutine sees the error and ends
		}
		if admitted {
			return lc, nil
		}
		_ = c.Close()
	}
}

// admit counts lc as open, closing (returning) the connections that make
// room for it; false when lc itself is the one to close.
func (l *limitListener) admit(lc *limitConn) ([]*limitConn, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepted++
	lc.seq = l.accepted
	l.unauth[lc.addr]++ // the new connection's address counts it while shares are judged
	var victims []*limitConn
	for len(l.conns) >= l.n {
		v := l.victimLocked()
		if v == nil {
			l.uncount(l.unauth, lc.addr)
			lc.released = true
			return victims, false
		}
		l.releaseLocked(v)
		victims = append(victims, v)
	}
	l.conns[lc] = struct{}{}
	l.peak = max(l.peak, len(l.conns))
	return victims, true
}

// releaseLocked stops counting c (once).
func (l *limitListener) releaseLocked(c *limitConn) {
	if c.released {
		return
	}
	c.released = true
	delete(l.conns, c)
	if c.user != "" {
		l.uncount(l.users, c.user)
	} else {
		l.uncount(l.unauth, c.addr)
	}
}

// uncount takes one from counts[key], forgetting keys at zero (the maps
// hold only holders of open connections).
func (l *limitListener) uncount(counts map[string]int, key string) {
	if counts[key] <= 1 {
		delete(counts, key)
		return
	}
	counts[key]--
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
	// state is the http.ConnState the server last reported; active is
	// when (unix nanoseconds) the connection was accepted, last changed
	// state or last authenticated.
	state, active atomic.Int64
	// seq, released and user are guarded by l.mu; user is "" until a
	// request on the connection authenticated.
	seq      uint64
	released bool
	user     string
}

// touch records that c is in use now.
func (c *limitConn) touch() { c.active.Store(time.Now().UnixNano()) }

// Close closes the connection and frees its place.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return err
}

// markAuthenticated counts c against user from now on, not its address.
func (c *limitConn) markAuthenticated(user string) {
	c.touch()
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if c.released || c.user == user {
		return
	}
	if c.user == "" {
		c.l.uncount(c.l.unauth, c.addr)
	} else {
		c.l.uncount(c.l.users, c.user)
	}
	c.user = user
	c.l.users[user]++
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
			lc.state.Store(int64(s))
			lc.touch()
		}
	}
}

// markAuthenticated records that a request with context ctx (served by
// [serve]) authenticated as user, so that its connection counts against
// that user's share, not its address's: the redfish.Config.Authenticated
// hook.
func markAuthenticated(ctx context.Context, user string) {
	if lc, ok := ctx.Value(connKey{}).(*limitConn); ok {
		lc.markAuthenticated(user)
	}
}
