package connshare

import (
	"slices"
	"testing"
)

// TestVictimOrder: which connection a full listener closes for a new one
// (victimLocked's order), and that it refuses the new one rather than
// close a connection of a user within its share.
func TestVictimOrder(t *testing.T) {
	type conn struct {
		addr, user string
		stage      Stage
	}
	idle := func(addr string) conn { return conn{addr: addr, stage: StageIdle} }
	handshake := func(addr string) conn { return conn{addr: addr, stage: StageNew} }
	user := func(name string, s Stage) conn { return conn{addr: "10.0.0.9", user: name, stage: s} }
	for _, tc := range []struct {
		name  string
		open  []conn // oldest first
		from  string // the new connection's address
		close int    // index into open; -1: the new connection is refused
	}{
		{"an unfinished handshake before idle connections of an address holding more",
			[]conn{idle("a"), idle("a"), handshake("b"), user("admin", StageIdle)}, "c", 2},
		{"a user over its share before a handshake of an address within its share",
			[]conn{user("tenant", StageIdle), user("tenant", StageBusy), user("tenant", StageBusy), handshake("b")}, "c", 0},
		{"an address over its share closes its own oldest handshake, not an older one of another",
			[]conn{handshake("b"), handshake("a"), handshake("a"), user("admin", StageIdle)}, "a", 1},
		{"an over-share user's idle connection before its busy ones",
			[]conn{user("t", StageBusy), user("t", StageIdle), user("t", StageBusy), user("admin", StageIdle)}, "c", 1},
		{"an idle connection of the address most over its share before an older one of another",
			[]conn{idle("b"), idle("a"), idle("a"), idle("a")}, "c", 1},
		{"every connection a user's within its share: the new one is refused",
			[]conn{user("a", StageIdle), user("b", StageIdle), user("c", StageIdle), user("d", StageIdle)}, "e", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(nil, len(tc.open))
			var conns []*Conn
			for i, o := range tc.open {
				c := &Conn{l: l, addr: o.addr}
				c.active.Store(int64(i)) // the older, the less recently active
				if _, ok := l.admit(c); !ok {
					t.Fatalf("connection %d not admitted below the cap", i)
				}
				c.stage.Store(int64(o.stage))
				if o.user != "" {
					c.Authenticated(o.user)
					c.active.Store(int64(i))
				}
				conns = append(conns, c)
			}
			victims, admitted := l.admit(&Conn{l: l, addr: tc.from})
			got := -1
			if len(victims) == 1 {
				got = slices.Index(conns, victims[0])
			}
			if admitted != (tc.close >= 0) || len(victims) > 1 || got != tc.close {
				t.Errorf("closed %d of %d open (index %d), admitted %t; want index %d (-1: the new one refused)",
					len(victims), len(conns), got, admitted, tc.close)
			}
			if n := l.Open(); n != len(tc.open) {
				t.Errorf("%d open after admitting, want the cap %d", n, len(tc.open))
			}
		})
	}
}
