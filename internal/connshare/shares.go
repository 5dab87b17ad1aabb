package connshare

// victimLocked is the open connection to close so that a new one (counted
// in l.unauth, not yet in l.conns) can be admitted; nil when the new one
// is the one to close. Each connection counts against one holder, its user
// once authenticated, else its address. The first found of:
//
//  1. a connection without a request yet (a TLS handshake unfinished, or
//     silent after it) of the address most over its share of the room
//     users do not hold ([Listener.addrShare]);
//  2. a connection of the user most over its share of the cap
//     ([Listener.userShare]): an idle one before a busy one, the
//     least recently active first;
//  3. the oldest connection without a request yet, of any address;
//  4. an unauthenticated connection of the address most over its share,
//     an idle one before a busy one, the oldest first;
//  5. the oldest unauthenticated connection, an idle one first.
//
// So a flood of never-finishing handshakes, from however many addresses,
// closes its own handshakes (the new connection is always the newest)
// before any established connection; a user re-dialing past its share
// closes its own connections; and an established, authenticated, recently
// active connection of a user within its share is never closed.
func (l *Listener) victimLocked() *Conn {
	addrShare, userShare := l.addrShare(), l.userShare()
	var newOver, userOver, newAny, unauthOver, unauthAny *Conn
	for c := range l.conns {
		if c.user != "" {
			if l.users[c.user] > userShare && l.userFirst(c, userOver) {
				userOver = c
			}
			continue
		}
		over := l.unauth[c.addr] > addrShare
		if stage(c) == StageNew {
			if over && l.addrFirst(c, newOver) {
				newOver = c
			}
			if oldestFirst(c, newAny) {
				newAny = c
			}
		}
		if over && l.addrFirst(c, unauthOver) {
			unauthOver = c
		}
		if oldestFirst(c, unauthAny) {
			unauthAny = c
		}
	}
	for _, c := range []*Conn{newOver, userOver, newAny, unauthOver, unauthAny} {
		if c != nil {
			return c
		}
	}
	return nil
}

// addrShare is each address's share of the connections users do not
// hold (at least 1).
func (l *Listener) addrShare() int {
	held := 0
	for _, k := range l.users {
		held += k
	}
	return max(1, (l.n-held)/max(1, len(l.unauth)))
}

// userShare is each user's share of the cap: the cap over the users
// holding connections and one more, so that a user alone leaves room for
// the next to authenticate (at least 1).
func (l *Listener) userShare() int {
	return max(1, l.n/(len(l.users)+1))
}

// addrFirst reports whether unauthenticated c goes before cur (nil: c
// does): of the address holding more, else by [oldestFirst].
func (l *Listener) addrFirst(c, cur *Conn) bool {
	if cur == nil {
		return true
	}
	if a, b := l.unauth[c.addr], l.unauth[cur.addr]; a != b {
		return a > b
	}
	return oldestFirst(c, cur)
}

// userFirst reports whether authenticated c goes before cur (nil: c
// does): of the user holding more, then idle before busy, then the least
// recently active.
func (l *Listener) userFirst(c, cur *Conn) bool {
	if cur == nil {
		return true
	}
	if a, b := l.users[c.user], l.users[cur.user]; a != b {
		return a > b
	}
	if a, b := stage(c), stage(cur); a != b {
		return a < b
	}
	return c.active.Load() < cur.active.Load()
}

// oldestFirst reports whether c goes before cur (nil: c does): the less
// far it got ([stage]), then the oldest.
func oldestFirst(c, cur *Conn) bool {
	if cur == nil {
		return true
	}
	if a, b := stage(c), stage(cur); a != b {
		return a < b
	}
	return c.seq < cur.seq
}

// Stage is how far a connection got, the least far first.
type Stage int64

const (
	// StageNew is no request yet (a TLS or SSH handshake unfinished
	// included). A new connection starts here.
	StageNew Stage = iota
	// StageIdle is between requests (no console attached).
	StageIdle
	// StageBusy is in a request (a console attached).
	StageBusy
)

// stage is how far c got.
func stage(c *Conn) Stage { return Stage(c.stage.Load()) }
