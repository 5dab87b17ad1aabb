package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrBusy is returned (wrapped) when a password could not be checked
// because the hashing slots stayed taken: too many checks queued, or the
// wait outlasted [Config.MaxHashWait]. Nothing was decided about the
// password; the client retries later (503 with Retry-After).
var ErrBusy = errors.New("password checks busy")

// Priorities of the password checks waiting for a hashing slot, highest
// first. A check of an unknown user never waits for a slot (see
// [Authenticator.password]).
const (
	// prioRecent: a user who logged in successfully on this replica
	// recently (within the throttle's KnownFor): the clients a deployment
	// runs on, such as Ironic's conductor.
	prioRecent = iota
	// prioKnown: any other existing user, a real first login or a guess
	// at a real account (which the throttle's per-user and per-address
	// locks bound).
	prioKnown
	numPrios
)

// hashSlots hands out the MaxHashing slots for password hashing, highest
// priority first, first come first served within a priority, so that a
// flood of guesses at some accounts does not hold the real users of
// others behind it in one queue.
type hashSlots struct {
	// maxQueue bounds the checks waiting at each priority; one more is
	// refused with [ErrBusy] at once.
	maxQueue int

	mu      sync.Mutex
	free    int
	waiting [numPrios][]*hashWaiter
}

// hashWaiter is a check waiting for a slot; granted is closed when the
// slot is handed to it.
type hashWaiter struct{ granted chan struct{} }

func newHashSlots(slots, maxQueue int) *hashSlots {
	return &hashSlots{free: slots, maxQueue: maxQueue}
}

// tryAcquire takes a slot only if one is free and nobody waits for one.
func (h *hashSlots) tryAcquire() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.free > 0 && h.queued() == 0 {
		h.free--
		return true
	}
	return false
}

// acquire takes a slot, waiting behind the checks of higher or equal
// priority queued before it, at most maxWait; it fails with [ErrBusy]
// when the queue of prio is full or the wait ends, or with ctx's error.
func (h *hashSlots) acquire(ctx context.Context, prio int, maxWait time.Duration) error {
	h.mu.Lock()
	if h.free > 0 && h.queued() == 0 {
		h.free--
		h.mu.Unlock()
		return nil
	}
	if len(h.waiting[prio]) >= h.maxQueue {
		h.mu.Unlock()
		return fmt.Errorf("%w: %d checks already wait for a hashing slot", ErrBusy, h.maxQueue)
	}
	w := &hashWaiter{granted: make(chan struct{})}
	h.waiting[prio] = append(h.waiting[prio], w)
	h.mu.Unlock()
	timer := time.NewTimer(maxWait)
	defer timer.Stop()
	var err error
	select {
	case <-w.granted:
		return nil
	case <-timer.C:
		err = fmt.Errorf("%w: no hashing slot within %s", ErrBusy, maxWait)
	case <-ctx.Done():
		err = fmt.Errorf("wait to check a password: %w", ctx.Err())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, q := range h.waiting[prio] {
		if q == w {
			h.waiting[prio] = append(h.waiting[prio][:i], h.waiting[prio][i+1:]...)
			return err
		}
	}
	// Granted while giving up: pass the slot on.
	h.releaseLocked()
	return err
}

// release returns a slot, handing it to the first waiter of the highest
// priority.
func (h *hashSlots) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.releaseLocked()
}

func (h *hashSlots) releaseLocked() {
	for p := range h.waiting {
		if q := h.waiting[p]; len(q) > 0 {
			h.waiting[p] = q[1:]
			close(q[0].granted)
			return
		}
	}
	h.free++
}

func (h *hashSlots) queued() int {
	n := 0
	for _, q := range h.waiting {
		n += len(q)
	}
	return n
}
