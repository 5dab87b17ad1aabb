package redfish

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWriteShare: a user alone is never refused for the budget nobody
// else wants; once another user writes, a user hammering writes is
// refused (429, Retry-After, GeneralError) while its share is spent,
// before the backend is called; the other user's writes and logins go on;
// GETs draw nothing; and a user whose share is spent cannot log in (a
// login is a write) while a wrong password for that name spends nothing.
func TestWriteShare(t *testing.T) {
	e := newEnv(t)
	const burst = 3
	// No refill within the test; a write counts as contending for an hour.
	e.srv.writes = newWriteShares(WriteShare{PerSecond: 0.001, Burst: burst, Contention: time.Hour})
	reset := func(user, id string) *http.Response {
		t.Helper()
		return e.do(t, req{method: http.MethodPost, user: user, path: "/redfish/v1/Systems/" + id + "/Actions/ComputerSystem.Reset",
			body: `{"ResetType":"On"}`}).Result()
	}
	login := func(user, pass string) int {
		t.Helper()
		return e.do(t, req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions",
			body: `{"UserName":"` + user + `","Password":"` + pass + `"}`}).Code
	}
	for range 5 {
		e.get(t, "alice", "/redfish/v1/Systems/team-a.vm1") // reads draw nothing
	}
	for i := range burst + 2 {
		if r := reset("alice", "team-a.vm1"); r.StatusCode != http.StatusNoContent {
			t.Fatalf("alice's write %d, nobody else writing: %d", i+1, r.StatusCode)
		}
	}
	// bob contends: from now on alice's spent share is enforced.
	if r := reset("bob", "team-b.vm3"); r.StatusCode != http.StatusNoContent {
		t.Fatalf("bob's first write: %d", r.StatusCode)
	}
	e.fake.takeCalls()
	rec := e.do(t, req{method: http.MethodPost, user: "alice", path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", body: `{"ResetType":"On"}`})
	got := errInfo(t, rec)
	if diff := cmp.Diff(errorInfo{Status: http.StatusTooManyRequests, IDs: []string{"GeneralError"}}, got); diff != "" {
		t.Errorf("alice's write past her share (-want +got):\n%s", diff)
	}
	if secs, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || secs < 1 {
		t.Errorf("Retry-After %q, want whole seconds", rec.Header().Get("Retry-After"))
	}
	if calls := e.fake.takeCalls(); len(calls) != 0 {
		t.Errorf("the refused write reached the backend: %v", calls)
	}
	if code := login("alice", "alice-pw"); code != http.StatusTooManyRequests {
		t.Errorf("alice's login with her share spent: %d, want 429", code)
	}
	// bob's share is his own: with his first, two writes and a login.
	for i := range burst - 2 {
		if r := reset("bob", "team-b.vm3"); r.StatusCode != http.StatusNoContent {
			t.Fatalf("bob's write %d while alice is refused: %d", i+1, r.StatusCode)
		}
	}
	if code := login("bob", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("bob's wrong password: %d, want 401", code)
	}
	if code := login("bob", "bob-pw"); code != http.StatusCreated {
		t.Errorf("bob's login (his last write; a wrong password spent none): %d, want 201", code)
	}
	if r := reset("bob", "team-b.vm3"); r.StatusCode != http.StatusTooManyRequests {
		t.Errorf("bob's write past his share: %d, want 429", r.StatusCode)
	}
}
