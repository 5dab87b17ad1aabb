package connshare

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redfish-bridge/redfish-bridge/internal/addrkey"
)

// Listener keeps at most n connections open, handshakes included,
// and shares them out so that no user and no address locks the others
// out. Each open connection counts against one holder: its user once one
// of its requests or logins authenticated ([Conn.Authenticated]), else its address (an
// IPv6 /64 counts as one). Accept never waits: when a new connection would
// exceed n it closes another, from whoever holds more than its share, a
// connection without a request yet (a TLS handshake in progress) first and
// an authenticated, recently active one last ([Listener.victimLocked]
// has the order), or else the new connection itself. It never holds more
// than n.
type Listener struct {
	net.Listener
	n int

	mu    sync.Mutex
	conns map[*Conn]struct{}
	// unauth counts each address's unauthenticated connections, users
	// each user's authenticated ones.
	unauth, users map[string]int
	// accepted numbers the connections in the order they were accepted.
	accepted uint64
	// peak is the most connections ever open at once.
	peak int
}

// New caps l at n connections.
func New(l net.Listener, n int) *Listener {
	return &Listener{Listener: l, n: n, conns: map[*Conn]struct{}{},
		unauth: map[string]int{}, users: map[string]int{}}
}

// Accept returns the next connection the shares admit; a connection they
// do not admit is closed at once (the client sees its connection closed
// and may dial again).
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &Conn{Conn: c, l: l, addr: addrKey(c.RemoteAddr())}
		lc.Touch()
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
func (l *Listener) admit(lc *Conn) ([]*Conn, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepted++
	lc.seq = l.accepted
	l.unauth[lc.addr]++ // the new connection's address counts it while shares are judged
	var victims []*Conn
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
func (l *Listener) releaseLocked(c *Conn) {
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
func (l *Listener) uncount(counts map[string]int, key string) {
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

// Conn is a connection of a Listener.
type Conn struct {
	net.Conn
	l    *Listener
	addr string
	// stage is how far the connection got ([Stage]); active is when
	// (unix nanoseconds) the connection was accepted, last changed stage
	// or last authenticated.
	stage, active atomic.Int64
	// seq, released and user are guarded by l.mu; user is "" until a
	// request on the connection authenticated.
	seq      uint64
	released bool
	user     string
}

// Touch records that c is in use now.
func (c *Conn) Touch() { c.active.Store(time.Now().UnixNano()) }

// Close closes the connection and frees its place.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return err
}

// Authenticated counts c against user from now on, not its address.
func (c *Conn) Authenticated(user string) {
	c.Touch()
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

// Of is the Conn under c (a *tls.Conn's included), or nil.
func Of(c net.Conn) *Conn {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn()
	}
	lc, _ := c.(*Conn)
	return lc
}

// SetStage records how far c got, and that it is in use now.
func (c *Conn) SetStage(s Stage) {
	c.stage.Store(int64(s))
	c.Touch()
}

// Open is how many connections l counts as open.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Peak is the most connections l held at once.
func (l *Listener) Peak() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.peak
}
