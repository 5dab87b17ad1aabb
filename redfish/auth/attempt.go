package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/redfish-bridge/redfish-bridge/internal/addrkey"
)

// Attempt is a password check in progress, reserved by [Throttle.Begin].
// Exactly one of Fail, Succeed or Abandon ends it.
type Attempt struct {
	t        *Throttle
	ip, user string
	gate     *gate
	ended    bool
}

// gate lets one check of a (peer IP, user) pair run at a time.
type gate struct {
	slot    chan struct{} // holds a token while a check runs
	waiters int           // checks holding or waiting for the slot
}

// Begin reserves a password check of (ip, user), so that concurrent
// guesses cost what sequential ones do:
//
//   - it first waits (until ctx ends) while another check of the same pair
//     runs, so the pair's backoff is armed by the earlier failure before the
//     next check is decided;
//   - it then refuses like [Throttle.Check], counting the checks still
//     running from ip (of other users), and of user (from other addresses),
//     as if they had failed: at most IPFailures+1 and UserFailures+1 checks
//     are ever decided before the locks engage.
//
// A refusal is a [*ThrottledError]; the caller then checks no password.
func (t *Throttle) Begin(ctx context.Context, ip, user string, now func() time.Time) (*Attempt, error) {
	ip = addrkey.FromHost(ip)
	p := pair{ip, user}
	t.mu.Lock()
	t.init()
	g := t.gates[p]
	if g == nil {
		g = &gate{slot: make(chan struct{}, 1)}
		t.gates[p] = g
	}
	g.waiters++
	t.mu.Unlock()
	select {
	case g.slot <- struct{}{}:
	case <-ctx.Done():
		t.leave(p, g)
		return nil, fmt.Errorf("wait for the other login checks of %q from %s: %w", user, ip, ctx.Err())
	}
	a := &Attempt{t: t, ip: ip, user: user, gate: g}
	if wait := t.reserve(ip, user, now()); wait > 0 {
		<-g.slot
		t.leave(p, g)
		return nil, &ThrottledError{RetryAfter: wait}
	}
	return a, nil
}

// reserve decides an attempt whose pair holds its gate: the wait, or zero
// after counting it as running.
func (t *Throttle) reserve(ip, user string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if wait := t.check(ip, user, now); wait > 0 {
		return wait
	}
	failures := func(w *window) int {
		if w == nil || now.Sub(w.start) > t.Window {
			return 0
		}
		return w.failures
	}
	// Running checks may all fail: refuse the one that could exceed a
	// limit before the running ones are decided (they may yet succeed, so
	// retry soon).
	if failures(t.ips[ip])+t.ipBusy[ip] > t.IPFailures ||
		failures(t.users[user])+t.userBusy[user] > t.UserFailures && !t.isKnown(ip, user, now) {
		return t.BaseDelay
	}
	t.ipBusy[ip]++
	t.userBusy[user]++
	return 0
}

// leave drops a check's hold on gate g of pair p.
func (t *Throttle) leave(p pair, g *gate) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if g.waiters--; g.waiters == 0 {
		delete(t.gates, p)
	}
}

// Fail ends the attempt as a failed login ([Throttle.Fail]).
func (a *Attempt) Fail(now time.Time) {
	if !a.ended {
		a.t.Fail(a.ip, a.user, now)
	}
	a.Abandon()
}

// Succeed ends the attempt as a successful login ([Throttle.Succeed]).
func (a *Attempt) Succeed(now time.Time) {
	if !a.ended {
		a.t.Succeed(a.ip, a.user, now)
	}
	a.Abandon()
}

// Abandon ends the attempt without an outcome (the user could not be
// looked up); it does nothing after the attempt ended.
func (a *Attempt) Abandon() {
	if a.ended {
		return
	}
	a.ended = true
	a.t.mu.Lock()
	if a.t.ipBusy[a.ip]--; a.t.ipBusy[a.ip] <= 0 {
		delete(a.t.ipBusy, a.ip)
	}
	if a.t.userBusy[a.user]--; a.t.userBusy[a.user] <= 0 {
		delete(a.t.userBusy, a.user)
	}
	a.t.mu.Unlock()
	<-a.gate.slot
	a.t.leave(pair{a.ip, a.user}, a.gate)
}
