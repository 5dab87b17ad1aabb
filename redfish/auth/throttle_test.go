package auth

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// failN records n failed checks through [Throttle.Begin], from ip(i) as
// user(i), at now.
func failN(t *testing.T, th *Throttle, n int, ip, user func(i int) string, now time.Time) {
	t.Helper()
	for i := range n {
		att, err := th.Begin(t.Context(), ip(i), user(i), func() time.Time { return now })
		if err != nil {
			t.Fatalf("attempt %d (%s, %s) refused before the limit: %v", i, ip(i), user(i), err)
		}
		att.Fail(now)
	}
}

// retryAfter is how long Begin makes (ip, user) wait at now; zero when
// it may proceed.
func retryAfter(t *testing.T, th *Throttle, ip, user string, now time.Time) time.Duration {
	t.Helper()
	att, err := th.Begin(t.Context(), ip, user, func() time.Time { return now })
	var throttled *ThrottledError
	switch {
	case errors.As(err, &throttled):
		return throttled.RetryAfter
	case err != nil:
		t.Fatalf("begin (%s, %s): %v", ip, user, err)
	}
	att.Abandon()
	return 0
}

// TestThrottleLockLastsLockFor is docs/reliability.md row 108: a lock
// lasted until the failures' 10-minute window ended, answering
// Retry-After: 1 after the documented 60 s; now it lasts LockFor, each
// refusal says the real remaining time, and after it the address (or
// user) starts afresh.
func TestThrottleLockLastsLockFor(t *testing.T) {
	t0 := time.Unix(1800000000, 0)
	tests := []struct {
		name     string
		limit    func(th *Throttle) int
		ip, user func(i int) string
		// probe is a new attempt the lock refuses.
		probeIP, probeUser string
	}{
		{
			name:    "address spraying users",
			limit:   func(th *Throttle) int { return th.IPFailures },
			ip:      func(int) string { return "198.51.100.7" },
			user:    func(i int) string { return fmt.Sprintf("user%d", i) },
			probeIP: "198.51.100.7", probeUser: "fresh",
		},
		{
			name:    "one user from many addresses",
			limit:   func(th *Throttle) int { return th.UserFailures },
			ip:      func(i int) string { return fmt.Sprintf("192.0.2.%d", i+1) },
			user:    func(int) string { return "alice" },
			probeIP: "203.0.113.1", probeUser: "alice",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := NewThrottle()
			failN(t, th, tt.limit(th)+1, tt.ip, tt.user, t0)
			for _, c := range []struct {
				after, want time.Duration
			}{
				{0, th.LockFor},
				{th.LockFor / 2, th.LockFor / 2},
				{th.LockFor - time.Second, time.Second},
				{th.LockFor, 0},
			} {
				if got := retryAfter(t, th, tt.probeIP, tt.probeUser, t0.Add(c.after)); got != c.want {
					t.Errorf("%s after the lock began: wait %s, want %s", c.after, got, c.want)
				}
			}
			// After the lock, locking again takes the limit's failures
			// again.
			end := t0.Add(th.LockFor)
			failN(t, th, tt.limit(th), tt.ip, func(i int) string { return tt.user(i) + "-again" }, end)
			if got := retryAfter(t, th, tt.probeIP, tt.probeUser, end); got != 0 {
				t.Errorf("relocked after %d failures, the limit is %d: wait %s", tt.limit(th), tt.limit(th), got)
			}
		})
	}
}

// TestThrottleIPv6Prefix is docs/reliability.md row 109: failures from
// the addresses of one IPv6 /64 count as one address's (each counted
// alone, 120 failures were never locked out); another /64 and IPv4 stay
// apart.
func TestThrottleIPv6Prefix(t *testing.T) {
	th := NewThrottle()
	now := time.Unix(1800000000, 0)
	walk := func(i int) string { return fmt.Sprintf("2001:db8:1:2::%x", i+1) }
	failN(t, th, th.IPFailures+1, walk, func(i int) string { return fmt.Sprintf("user%d", i) }, now)
	for _, c := range []struct {
		ip     string
		locked bool
	}{
		{"2001:db8:1:2:ffff::1", true},
		{"[2001:db8:1:2::beef]:443", true},
		{"2001:db8:1:3::1", false},
		{"192.0.2.1", false},
	} {
		if got := retryAfter(t, th, c.ip, "fresh", now) > 0; got != c.locked {
			t.Errorf("%s locked: %t, want %t", c.ip, got, c.locked)
		}
		if got := th.Check(c.ip, "fresh", now) > 0; got != c.locked {
			t.Errorf("Check(%s) locked: %t, want %t", c.ip, got, c.locked)
		}
	}
}
