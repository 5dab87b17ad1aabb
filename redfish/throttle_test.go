package redfish

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// TestLoginLockFromIPv6Prefix is docs/reliability.md rows 108 and 109
// through HTTP: bad logins walking the addresses of one IPv6 /64 lock
// the /64 (each address counted alone, 120 failures never locked it);
// the 429's Retry-After is the lock's real remaining time, rounded up
// (it said 1 while the lock lasted ~10 minutes), and once it has passed
// the right password logs in from that /64.
func TestLoginLockFromIPv6Prefix(t *testing.T) {
	e := newEnv(t)
	defaults := auth.NewThrottle() // what newEnv's authenticator uses
	lim := defaults.IPFailures
	login := func(remote, user, password string) *http.Response {
		rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions",
			body: `{"UserName":"` + user + `","Password":"` + password + `"}`, remote: remote})
		return rec.Result()
	}
	for i := range lim + 1 {
		if got := login(fmt.Sprintf("[2001:db8:7:7::%x]:4000", i+1), fmt.Sprintf("nobody%d", i), "guess").StatusCode; got != http.StatusUnauthorized {
			t.Fatalf("bad login %d: %d, want 401", i, got)
		}
	}
	lock := defaults.LockFor
	for _, c := range []struct {
		after     time.Duration
		wantRetry string
	}{
		{0, fmt.Sprint(int(lock.Seconds()))},
		{lock/2 - 400*time.Millisecond, fmt.Sprint(int(lock.Seconds())/2 + 1)},
	} {
		e.clock.Add(c.after)
		r := login("[2001:db8:7:7:abcd::1]:4000", "alice", "alice-pw")
		if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != c.wantRetry {
			t.Errorf("%s into the lock, the /64's right password: %d Retry-After %q, want 429 Retry-After %q",
				c.after, r.StatusCode, r.Header.Get("Retry-After"), c.wantRetry)
		}
	}
	if got := login("[2001:db8:7:8::1]:4000", "bob", "bob-pw").StatusCode; got != http.StatusCreated {
		t.Errorf("another /64 during the lock: %d, want 201", got)
	}
	e.clock.Add(lock/2 + 400*time.Millisecond) // the lock has passed
	if r := login("[2001:db8:7:7:abcd::1]:4000", "alice", "alice-pw"); r.StatusCode != http.StatusCreated {
		t.Errorf("the /64 once the lock has passed: %d Retry-After %q, want 201", r.StatusCode, r.Header.Get("Retry-After"))
	}
}

// TestPasswordCheckBusyAnswers503 is docs/reliability.md row 110's
// answer: a password that could not be checked for want of a hashing
// slot (auth.ErrBusy) is 503 with Retry-After, logged as a rejection,
// not a 500 failure.
func TestPasswordCheckBusyAnswers503(t *testing.T) {
	err := fmt.Errorf("log in %q: %w", "alice", fmt.Errorf("%w: no hashing slot within 5s", auth.ErrBusy))
	e := classify(err, http.MethodPost, sessionsURI, "")
	if e.Status != http.StatusServiceUnavailable || e.Header.Get("Retry-After") == "" || e.Messages[0].ID != "ServiceTemporarilyUnavailable" {
		t.Errorf("busy password check: %d Retry-After %q %s, want 503 ServiceTemporarilyUnavailable with Retry-After",
			e.Status, e.Header.Get("Retry-After"), e.Messages[0].ID)
	}
	if serviceFailed(e.Status, err) {
		t.Error("a busy password check is logged as a failure of the service")
	}
}
