package redfish

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAdministratorSessions checks the DMTF privilege model on sessions:
// an Administrator (ConfigureManager) lists, reads and ends every user's
// sessions; an Operator sees and ends only its own user's; a session
// another caller ended stops working; and POST to Sessions/Members opens a
// session like POST to the collection.
func TestAdministratorSessions(t *testing.T) {
	e := newEnv(t)
	aliceTok, aliceLoc := login(t, e, "alice", "alice-pw")
	alice2Tok, alice2Loc := login(t, e, "alice", "alice-pw")
	bobTok, bobLoc := login(t, e, "bob", "bob-pw")
	rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions/Members",
		body: `{"UserName":"carol","Password":"carol-pw"}`})
	if rec.Code != http.StatusCreated || rec.Header().Get(HeaderAuthToken) == "" {
		t.Fatalf("POST Sessions/Members: %d %s", rec.Code, rec.Body)
	}
	carolLoc := rec.Header().Get("Location")
	sessions := func(r req) []string {
		t.Helper()
		r.path = "/redfish/v1/SessionService/Sessions"
		got := members(t, decode(t, e.do(t, r)))
		slices.Sort(got)
		return got
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }
	for _, tc := range []struct {
		who  string
		r    req
		want []string
	}{
		{"admin (Basic)", req{user: "admin"}, sorted(aliceLoc, alice2Loc, bobLoc, carolLoc)},
		{"alice (token)", req{token: aliceTok}, sorted(aliceLoc, alice2Loc)},
		{"alice (Basic)", req{user: "alice"}, sorted(aliceLoc, alice2Loc)},
		{"bob (token)", req{token: bobTok}, []string{bobLoc}},
	} {
		if diff := cmp.Diff(tc.want, sessions(tc.r)); diff != "" {
			t.Errorf("sessions %s sees (-want +got):\n%s", tc.who, diff)
		}
	}
	if got := decode(t, e.do(t, req{path: bobLoc, user: "admin"})); got["UserName"] != "bob" {
		t.Errorf("admin reads bob's session: %v", got)
	}
	// An Operator cannot end another user's session, an Administrator can.
	if rec := e.do(t, req{method: http.MethodDelete, path: bobLoc, token: aliceTok}); rec.Code != http.StatusNotFound {
		t.Errorf("alice deletes bob's session: %d, want 404", rec.Code)
	}
	if rec := e.do(t, req{method: http.MethodDelete, path: bobLoc, user: "admin"}); rec.Code != http.StatusNoContent {
		t.Fatalf("admin deletes bob's session: %d %s", rec.Code, rec.Body)
	}
	if got := errInfo(t, e.do(t, req{path: "/redfish/v1/Systems", token: bobTok})); got.Status != http.StatusUnauthorized {
		t.Errorf("bob's token after the admin ended it: %+v", got)
	}
	// A user ends its own other session.
	if rec := e.do(t, req{method: http.MethodDelete, path: alice2Loc, token: aliceTok}); rec.Code != http.StatusNoContent {
		t.Fatalf("alice ends her other session: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do(t, req{path: "/redfish/v1/Systems", token: alice2Tok}); rec.Code != http.StatusUnauthorized {
		t.Errorf("alice's ended session: %d", rec.Code)
	}
	if diff := cmp.Diff(sorted(aliceLoc, carolLoc), sessions(req{user: "admin"})); diff != "" {
		t.Errorf("sessions after the logouts (-want +got):\n%s", diff)
	}
	for _, path := range []string{bobLoc, "/redfish/v1/SessionService/Sessions/0123456789abcdef0123456789abcdef"} {
		if rec := e.do(t, req{method: http.MethodDelete, path: path, user: "admin"}); rec.Code != http.StatusNotFound {
			t.Errorf("DELETE %s (not open): %d, want 404", path, rec.Code)
		}
	}
}
