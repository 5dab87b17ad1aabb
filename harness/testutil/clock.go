package testutil

import (
	"sync"
	"time"
)

// Clock is a clock the test moves: [Clock.Now] serves as a component's
// Now func, [Clock.Add] moves it. Safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a Clock standing at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now is the time the clock stands at.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock d forward.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
