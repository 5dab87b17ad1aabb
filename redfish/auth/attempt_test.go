package auth

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// hashCounter wraps bcrypt: it counts the password hashes checked and the
// most checked at once, each made to take a few milliseconds (a real-cost
// hash takes ~50-100 ms) so that concurrent checks overlap.
type hashCounter struct {
	calls, running, most atomic.Int64
	dummy                []byte // never matches; not hashed (full cost)
}

func (h *hashCounter) compare(hash, password []byte) error {
	h.calls.Add(1)
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
	time.Sleep(5 * time.Millisecond)
	if bytes.Equal(hash, h.dummy) {
		return bcrypt.ErrMismatchedHashAndPassword
	}
	return bcrypt.CompareHashAndPassword(hash, password)
}

// TestConcurrentBadLogins is the attack of docs/reliability.md row 16: 400 bad
// logins at once. The throttle used to check before a failure was
// recorded, so all 400 reached bcrypt (23 s of CPU); now they cost what
// the same logins one after another do, the hashing running at once stays
// within MaxHashing, and the real user, from the address it logs in from,
// still logs in.
func TestConcurrentBadLogins(t *testing.T) {
	const n = 400
	th := NewThrottle()
	tests := []struct {
		name     string
		ip, user func(i int) string
		// wantHashes is what n sequential attempts reach: the free
		// failures and the one that arms the backoff, or the address
		// limit and the one that locks it.
		wantHashes int64
	}{
		{
			name:       "one address, one user",
			ip:         func(int) string { return "203.0.113.9" },
			user:       func(int) string { return "alice" },
			wantHashes: int64(th.FreeFailures + 1),
		},
		{
			name:       "one address spraying users",
			ip:         func(int) string { return "203.0.113.9" },
			user:       func(i int) string { return "user" + strconv.Itoa(i) },
			wantHashes: int64(th.IPFailures + 1),
		},
		{
			name: "many addresses, one user",
			ip:   func(i int) string { return "203.0.113." + strconv.Itoa(i%250) + "." + strconv.Itoa(i/250) },
			user: func(int) string { return "alice" },
			// the per-user lock
			wantHashes: int64(th.UserFailures + 1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			h := &hashCounter{dummy: f.a.dummy}
			f.a.compare = h.compare
			f.a.hashing = newHashSlots(2, 2*HashQueuePerSlot)
			ctx := t.Context()
			if _, err := f.a.Password(ctx, "198.51.100.7", "alice", "pw"); err != nil {
				t.Fatal(err)
			}
			h.calls.Store(0)
			start := make(chan struct{})
			var wg sync.WaitGroup
			var throttled atomic.Int64
			for i := range n {
				wg.Go(func() {
					<-start
					_, err := f.a.Password(ctx, tt.ip(i), tt.user(i), "guess"+strconv.Itoa(i))
					var te *ThrottledError
					switch {
					case errors.As(err, &te):
						throttled.Add(1)
					case !errors.Is(err, ErrBadCredentials):
						t.Errorf("guess %d: %v", i, err)
					}
				})
			}
			close(start)
			wg.Wait()
			t.Logf("%d bad logins at once: %d hashed (at most %d at a time), %d throttled", n, h.calls.Load(), h.most.Load(), throttled.Load())
			if got := h.calls.Load(); got > tt.wantHashes {
				t.Errorf("%d concurrent bad logins reached bcrypt %d times, want at most %d (as many as in a row)", n, got, tt.wantHashes)
			}
			if got := h.most.Load(); got > 2 {
				t.Errorf("%d hashes checked at once, want at most MaxHashing 2", got)
			}
			if _, _, err := f.a.Login(ctx, "198.51.100.7", "alice", "pw"); err != nil {
				t.Errorf("the right password from the user's address: %v", err)
			}
		})
	}
}

// TestConcurrentGoodLogins: a client sending many requests at once with the
// right password (Ironic's conductor over Basic auth) is neither throttled
// nor made to hash the password once per request.
func TestConcurrentGoodLogins(t *testing.T) {
	f := newFixture(t)
	h := &hashCounter{dummy: f.a.dummy}
	f.a.compare = h.compare
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			if _, err := f.a.Password(t.Context(), "192.0.2.1", "alice", "pw"); err != nil {
				t.Errorf("request %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if got := h.calls.Load(); got != 1 {
		t.Errorf("100 concurrent requests with the right password hashed it %d times, want 1", got)
	}
}
