package auth

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBadLoginFloodSparesRealLogins is docs/reliability.md row 110: bad
// logins of unknown users from many addresses (no throttle engages: each
// address and name fails once) used to queue FIFO for the one hashing
// slot, each a dummy compare, so a real first login waited behind all of
// them (12.6-19.9 s on the real binary, 500 after 30 s). Now an unknown
// user never queues and compares only within a small budget; the real
// logins, a recent user's and a first one, get the slot behind at most
// the compares already running.
func TestBadLoginFloodSparesRealLogins(t *testing.T) {
	const n = 400
	f := newFixture(t)
	f.users["bob"] = User{Name: "bob", PasswordHash: hash(t, "bob-pw"), Scope: Scope{Namespaces: []string{"b"}}}
	h := &hashCounter{dummy: f.a.dummy}
	f.a.compare = h.compare
	f.a.hashing = newHashSlots(1, HashQueuePerSlot)
	ctx := t.Context()
	if _, err := f.a.Password(ctx, "198.51.100.7", "alice", "pw"); err != nil { // alice is a recent user
		t.Fatal(err)
	}
	h.calls.Store(0)
	start := time.Now()
	var dummies atomic.Int64
	countingCompare := h.compare
	f.a.compare = func(hash, password []byte) error {
		if string(hash) == string(f.a.dummy) {
			dummies.Add(1)
		}
		return countingCompare(hash, password)
	}
	var wg sync.WaitGroup
	flooding := make(chan struct{})
	var once sync.Once
	for i := range n {
		wg.Go(func() {
			once.Do(func() { close(flooding) })
			_, err := f.a.Password(ctx, fmt.Sprintf("10.1.%d.%d", i/250, i%250+1), fmt.Sprintf("ghost%d", i), "guess")
			if !errors.Is(err, ErrBadCredentials) {
				t.Errorf("unknown user %d: %v, want bad credentials", i, err)
			}
		})
	}
	<-flooding
	for _, c := range []struct{ user, ip, pw string }{{"bob", "203.0.113.5", "bob-pw"}, {"alice", "203.0.113.6", "pw"}} {
		f.a.mu.Lock()
		clear(f.a.basic) // a check, not the cache of verified passwords
		f.a.mu.Unlock()
		began := time.Now()
		if _, err := f.a.Password(ctx, c.ip, c.user, c.pw); err != nil {
			t.Errorf("%s's login during the flood: %v", c.user, err)
		}
		t.Logf("%s's login during the flood took %s", c.user, time.Since(began))
	}
	wg.Wait()
	elapsed := time.Since(start)
	// The budget: a burst of dummyHashesPerSecond, then that rate.
	budget := int64(dummyHashesPerSecond*(1+elapsed.Seconds())) + 1
	t.Logf("%d unknown-user logins in %s: %d dummy compares (budget %d)", n, elapsed, dummies.Load(), budget)
	if got := dummies.Load(); got > budget {
		t.Errorf("%d unknown-user logins made %d dummy compares in %s, want at most %d", n, got, elapsed, budget)
	}
}

// TestHashSlotsPriority: a recent user's check queued after a known
// user's gets the slot first; within a priority, first come first served.
func TestHashSlotsPriority(t *testing.T) {
	h := newHashSlots(1, HashQueuePerSlot)
	if !h.tryAcquire() {
		t.Fatal("the free slot was not taken")
	}
	granted := make(chan string, 3)
	queue := func(name string, prio int) {
		want := h.queuedNow() + 1 // counted before the goroutine may queue
		go func() {
			if err := h.acquire(t.Context(), prio, time.Hour); err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			granted <- name
		}()
		for h.queuedNow() < want {
			runtime.Gosched() // until it is queued
		}
	}
	queue("known-1", prioKnown)
	queue("known-2", prioKnown)
	queue("recent", prioRecent)
	var order []string
	for range 3 {
		h.release()
		order = append(order, <-granted)
	}
	h.release()
	if want := []string{"recent", "known-1", "known-2"}; fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("slots granted in order %v, want %v", order, want)
	}
	if !h.tryAcquire() {
		t.Error("the slot was not free after every release")
	}
}

// TestPasswordCheckBusy: a check that cannot get a hashing slot (its
// queue full, or the wait over MaxHashWait) is ErrBusy, decided nothing
// (no failure counted), and is not a bad password.
func TestPasswordCheckBusy(t *testing.T) {
	for _, c := range []struct {
		name     string
		maxQueue int
		wait     time.Duration
	}{{"queue full", 0, time.Hour}, {"waited too long", HashQueuePerSlot, time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.a.cfg.MaxHashWait = c.wait
			f.a.hashing = newHashSlots(1, c.maxQueue)
			if !f.a.hashing.tryAcquire() { // a check that never ends
				t.Fatal("the free slot was not taken")
			}
			for range f.a.cfg.Throttle.FreeFailures + 2 {
				_, err := f.a.Password(t.Context(), "192.0.2.1", "alice", "pw")
				if !errors.Is(err, ErrBusy) {
					t.Fatalf("login while hashing is busy: %v, want ErrBusy", err)
				}
			}
			if wait := f.a.cfg.Throttle.Check("192.0.2.1", "alice", f.clock.Now()); wait != 0 {
				t.Errorf("busy checks counted as failures: wait %s", wait)
			}
			f.a.hashing.release()
			if _, err := f.a.Password(t.Context(), "192.0.2.1", "alice", "pw"); err != nil {
				t.Errorf("login once hashing is free: %v", err)
			}
		})
	}
}

// queuedNow is queued under the lock (tests).
func (h *hashSlots) queuedNow() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.queued()
}
