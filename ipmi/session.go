package ipmi

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// IPMI privilege levels.
const (
	privUser     = 2
	privOperator = 3
	privAdmin    = 4
)

// seqWindow is how far behind the highest sequence number seen a packet
// may arrive (out of order) and still be accepted once.
const seqWindow = 32

// session is one RMCP+ session, from Open Session to Close Session or its
// timeout. Its fields are guarded by mu, but for the ones set at Open
// Session (id, remoteID, key, peer, addrKey, suite).
type session struct {
	id, remoteID uint32
	key          system.Key
	peer         netip.AddrPort
	addrKey      string
	suite        suite

	mu     sync.Mutex
	active bool // RAKP 3 verified: keys set
	rm, rc [16]byte
	role   byte // RAKP 1's role byte, as the HMACs sign it
	name   []byte
	user   auth.User
	k      keys
	priv   byte // current privilege level
	// inHigh is the highest inbound sequence number accepted; inSeen
	// bit i is set when inHigh-i was accepted.
	inHigh uint32
	inSeen uint64
	outSeq uint32
	// last is when the session was last used; it ends timeout after.
	last time.Time
	// lastReq and lastResp are the last request message and its
	// response: a retry (ipmitool resends with the same rqSeq under a
	// new session sequence number) gets the response again instead of
	// running the command twice.
	lastReq, lastResp []byte
	// sol is the SOL payload this session activated, nil: none (not
	// guarded by mu: remove reads it, and it is called with mu held).
	sol atomic.Pointer[solPayload]
	// started, when set, runs once the answer that set it is sent (a
	// SOL payload's delivery starts after Activate Payload's answer).
	started func()
}

// accept records inbound sequence number seq, reporting false for one
// seen before, zero, or outside the window (a replay or a stray).
func (s *session) accept(seq uint32) bool {
	switch {
	case seq == 0:
		return false
	case seq > s.inHigh:
		d := seq - s.inHigh
		if s.inHigh != 0 && d > seqWindow {
			return false
		}
		if d >= 64 {
			s.inSeen = 0
		} else {
			s.inSeen <<= d
		}
		s.inSeen |= 1
		s.inHigh = seq
		return true
	default:
		d := s.inHigh - seq
		if d >= seqWindow || s.inSeen&(1<<d) != 0 {
			return false
		}
		s.inSeen |= 1 << d
		return true
	}
}

// nextOut returns the next outbound sequence number (never 0).
func (s *session) nextOut() uint32 {
	s.outSeq++
	if s.outSeq == 0 {
		s.outSeq = 1
	}
	return s.outSeq
}

// sessions is the table of every endpoint's sessions, bounded in total
// and per client address.
type sessions struct {
	mu      sync.Mutex
	byID    map[uint32]*session
	perAddr map[string]int
}

func newSessions() *sessions {
	return &sessions{byID: map[uint32]*session{}, perAddr: map[string]int{}}
}

// get returns the session with managed-system id id, or nil.
func (t *sessions) get(id uint32) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// add records s unless its address already holds perAddr sessions or the
// table holds total; it picks s.id.
func (t *sessions) add(s *session, perAddr, total int, newID func() uint32) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byID) >= total || t.perAddr[s.addrKey] >= perAddr {
		return false
	}
	for {
		s.id = newID()
		if _, taken := t.byID[s.id]; s.id != 0 && !taken {
			break
		}
	}
	t.byID[s.id] = s
	t.perAddr[s.addrKey]++
	return true
}

// remove ends session s (no-op when already ended), and the SOL payload
// it holds with it.
func (t *sessions) remove(s *session) {
	t.mu.Lock()
	if t.byID[s.id] != s {
		t.mu.Unlock()
		return
	}
	delete(t.byID, s.id)
	if t.perAddr[s.addrKey]--; t.perAddr[s.addrKey] <= 0 {
		delete(t.perAddr, s.addrKey)
	}
	t.mu.Unlock()
	if sol := s.sol.Load(); sol != nil {
		sol.end(errSessionEnded, false)
	}
}

// expire ends the sessions idle past their timeout: setup for a session
// still in RAKP, idle for an active one. It returns how many ended.
func (t *sessions) expire(now time.Time, setup, idle time.Duration) int {
	t.mu.Lock()
	var old []*session
	for _, s := range t.byID {
		s.mu.Lock()
		limit := idle
		if !s.active {
			limit = setup
		}
		if now.Sub(s.last) > limit {
			old = append(old, s)
		}
		s.mu.Unlock()
	}
	t.mu.Unlock()
	for _, s := range old {
		t.remove(s)
	}
	return len(old)
}

// removeAll ends every session.
func (t *sessions) removeAll() {
	t.mu.Lock()
	all := make([]*session, 0, len(t.byID))
	for _, s := range t.byID {
		all = append(all, s)
	}
	t.mu.Unlock()
	for _, s := range all {
		t.remove(s)
	}
}

// count is the number of sessions.
func (t *sessions) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}
