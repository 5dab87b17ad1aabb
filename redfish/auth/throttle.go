package auth

import (
	"sync"
	"time"

	"github.com/redfish-bridge/redfish-bridge/internal/addrkey"
)

// Throttle slows password guessing without letting a client dodge it or
// lock out somebody else.
//
//   - Per (peer IP, user): after FreeFailures failures, each further attempt
//     must wait an exponentially growing delay (BaseDelay doubling, capped at
//     MaxDelay). Only the guesser's own address is slowed down.
//   - Per peer IP, any user: more than IPFailures failures in Window (password
//     spraying) block that address for LockFor; after the lock the address
//     starts with no failures counted.
//   - Per user, any address (a distributed guess at one account): more than
//     UserFailures failures in Window block that user for LockFor, but only
//     from addresses that have not logged in as that user successfully in
//     the last KnownFor. The real user, coming from where they always come
//     from, keeps working: the per-user lock is soft.
//
// Concurrent checks are counted before they run ([Throttle.Begin]), so a
// burst of parallel guesses reaches the password hash no more often than
// the same guesses one after another.
//
// The peer IP must be the TCP peer, never a header the client chooses. It
// is counted under its [addrkey] (an IPv6 address as its /64, as the
// connection shares count it), so walking a /64 gains a guesser nothing.
// State is in memory: each replica throttles on its own, so N replicas allow
// at most N times the attempts.
type Throttle struct {
	FreeFailures int
	BaseDelay    time.Duration
	MaxDelay     time.Duration
	IPFailures   int
	UserFailures int
	Window       time.Duration
	LockFor      time.Duration
	KnownFor     time.Duration
	// MaxEntries bounds each map; beyond it stale entries are pruned.
	MaxEntries int

	mu    sync.Mutex
	pairs map[pair]*backoff
	ips   map[string]*window
	users map[string]*window
	known map[pair]time.Time
	// succeeded is, per user, when its last successful login stops
	// counting as recent ([Throttle.Recent]).
	succeeded map[string]time.Time
	// checks running ([Throttle.Begin]): a gate per pair, counts per
	// address and per user
	gates    map[pair]*gate
	ipBusy   map[string]int
	userBusy map[string]int
}

type pair struct{ ip, user string }

type backoff struct {
	failures int
	until    time.Time // no attempt before
	last     time.Time
}

type window struct {
	start    time.Time
	failures int
	until    time.Time // locked until
}

// NewThrottle returns a Throttle with production defaults.
func NewThrottle() *Throttle {
	return &Throttle{
		FreeFailures: 3,
		BaseDelay:    time.Second,
		MaxDelay:     5 * time.Minute,
		IPFailures:   50,
		UserFailures: 20,
		Window:       10 * time.Minute,
		LockFor:      time.Minute,
		KnownFor:     24 * time.Hour,
		MaxEntries:   10000,
	}
}

// Check reports how long the attempt (ip, user) must still wait; zero means
// it may proceed. It records nothing.
func (t *Throttle) Check(ip, user string, now time.Time) time.Duration {
	ip = addrkey.FromHost(ip)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.check(ip, user, now)
}

// check is Check with t.mu held.
func (t *Throttle) check(ip, user string, now time.Time) time.Duration {
	wait := time.Duration(0)
	later := func(until time.Time) {
		if d := until.Sub(now); d > wait {
			wait = d
		}
	}
	if b := t.pairs[pair{ip, user}]; b != nil {
		later(b.until)
	}
	if w := t.ips[ip]; w != nil {
		later(w.until)
	}
	if w := t.users[user]; w != nil && !t.isKnown(ip, user, now) {
		later(w.until)
	}
	return wait
}

// Fail records a failed attempt.
func (t *Throttle) Fail(ip, user string, now time.Time) {
	ip = addrkey.FromHost(ip)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	t.prune(now)
	p := pair{ip, user}
	b := t.pairs[p]
	if b == nil {
		b = &backoff{}
		t.pairs[p] = b
	}
	b.failures++
	b.last = now
	if over := b.failures - t.FreeFailures; over > 0 {
		d := t.BaseDelay << min(over-1, 30)
		if d > t.MaxDelay || d <= 0 {
			d = t.MaxDelay
		}
		b.until = now.Add(d)
	}
	t.count(t.ips, ip, t.IPFailures, now)
	t.count(t.users, user, t.UserFailures, now)
}

// Succeed records a successful login: the pair's backoff is cleared and the
// address becomes known for the user (exempt from the soft per-user lock).
func (t *Throttle) Succeed(ip, user string, now time.Time) {
	ip = addrkey.FromHost(ip)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	t.prune(now)
	delete(t.pairs, pair{ip, user})
	t.known[pair{ip, user}] = now.Add(t.KnownFor)
	t.succeeded[user] = now.Add(t.KnownFor)
}

// Recent reports whether user logged in successfully, from any address,
// within the last KnownFor: its password checks go first
// ([Authenticator.password]).
func (t *Throttle) Recent(user string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	exp, ok := t.succeeded[user]
	return ok && now.Before(exp)
}

func (t *Throttle) count(m map[string]*window, k string, limit int, now time.Time) {
	w := m[k]
	if w == nil || now.Sub(w.start) > t.Window {
		w = &window{start: now}
		m[k] = w
	}
	w.failures++
	if w.failures > limit {
		// The lock is the penalty: once it ends, counting starts afresh,
		// so the next lock takes another limit+1 failures. (Counting on
		// in the old window kept refusing until the window ended, ~10
		// minutes after its first failure, with Retry-After: 1.)
		w.until = now.Add(t.LockFor)
		w.start, w.failures = w.until, 0
	}
}

func (t *Throttle) isKnown(ip, user string, now time.Time) bool {
	exp, ok := t.known[pair{ip, user}]
	return ok && now.Before(exp)
}

func (t *Throttle) init() {
	if t.pairs == nil {
		t.pairs = map[pair]*backoff{}
		t.ips = map[string]*window{}
		t.users = map[string]*window{}
		t.known = map[pair]time.Time{}
		t.succeeded = map[string]time.Time{}
		t.gates = map[pair]*gate{}
		t.ipBusy = map[string]int{}
		t.userBusy = map[string]int{}
	}
}

// prune drops stale entries once a map outgrows MaxEntries, so a flood of
// made-up user names cannot grow memory without bound.
func (t *Throttle) prune(now time.Time) {
	if len(t.pairs) > t.MaxEntries {
		for k, b := range t.pairs {
			if now.After(b.until) && now.Sub(b.last) > t.Window {
				delete(t.pairs, k)
			}
		}
	}
	for _, m := range []map[string]*window{t.ips, t.users} {
		if len(m) > t.MaxEntries {
			for k, w := range m {
				if now.After(w.until) && now.Sub(w.start) > t.Window {
					delete(m, k)
				}
			}
		}
	}
	if len(t.known) > t.MaxEntries {
		for k, exp := range t.known {
			if now.After(exp) {
				delete(t.known, k)
			}
		}
	}
	if len(t.succeeded) > t.MaxEntries {
		for k, exp := range t.succeeded {
			if now.After(exp) {
				delete(t.succeeded, k)
			}
		}
	}
}
