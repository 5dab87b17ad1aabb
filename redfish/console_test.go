package redfish

import (
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeConsoles records what the Manager asks of the graphical console.
type fakeConsoles struct {
	issued   []string // "session user id"
	viewOnly []bool   // of each issued token
	ended    []string
}

func (f *fakeConsoles) GraphicalConsole() (bool, int) { return true, 4 }
func (f *fakeConsoles) PageURI(id string) string      { return "/console/" + id }
func (f *fakeConsoles) SessionEnded(session string)   { f.ended = append(f.ended, session) }
func (f *fakeConsoles) Issue(session, user, id string, viewOnly bool) (string, error) {
	f.issued = append(f.issued, session+" "+user+" "+id)
	f.viewOnly = append(f.viewOnly, viewOnly)
	return "tok-" + id, nil
}

// newConsoleEnv is newEnv with a graphical console.
func newConsoleEnv(t *testing.T) (*env, *fakeConsoles) {
	t.Helper()
	e := newEnv(t)
	fc := &fakeConsoles{}
	b := backendsOf(e.fake, e.auth)
	b.Consoles = fc
	srv, ech, err := newServer(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666", Version: "1.0.0", Logger: slog.New(slog.DiscardHandler)}, b)
	if err != nil {
		t.Fatal(err)
	}
	e.srv, e.e = srv, ech
	return e, fc
}

// TestManagerGraphicalConsole: each Manager advertises the console
// (sushy's fields) and leads to its page and token action; without a
// console it says ServiceEnabled false and links nothing.
func TestManagerGraphicalConsole(t *testing.T) {
	const mgr = "/redfish/v1/Managers/team-a.vm1"
	e, _ := newConsoleEnv(t)
	v := newValidator(t)
	checkServed(t, e, v, mgr, "", map[string]any{
		"GraphicalConsole": map[string]any{"ServiceEnabled": true, "MaxConcurrentSessions": 4.0, "ConnectTypesSupported": []any{"KVMIP"}},
		"Oem":              map[string]any{"RedfishBridge": map[string]any{"GraphicalConsolePage": "/console/team-a.vm1"}},
		"Actions": map[string]any{"Oem": map[string]any{"#RedfishBridge.ConsoleToken": map[string]any{
			"target": mgr + "/Actions/Oem/RedfishBridge.ConsoleToken"}}},
	})
	plain := newEnv(t)
	got := plain.get(t, "admin", mgr)
	if diff := cmp.Diff(map[string]any{"ServiceEnabled": false, "MaxConcurrentSessions": 0.0, "ConnectTypesSupported": []any{"KVMIP"}}, got["GraphicalConsole"]); diff != "" {
		t.Errorf("without a console (-want +got):\n%s", diff)
	}
	if got["Oem"] != nil || got["Actions"] != nil {
		t.Errorf("without a console the Manager links %v, %v", got["Oem"], got["Actions"])
	}
}

// TestConsoleToken: the token is issued to a session for a System in its
// scope; Basic credentials get 403, a scoped-away user the same 404 as
// for a missing System; a logout ends the session's consoles.
func TestConsoleToken(t *testing.T) {
	e, fc := newConsoleEnv(t)
	const action = "/Actions/Oem/RedfishBridge.ConsoleToken"
	token, location := login(t, e, "alice", "alice-pw")
	rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Managers/team-a.vm1" + action, token: token, body: "{}"})
	if rec.Code != http.StatusOK || decode(t, rec)["Token"] != "tok-team-a.vm1" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("token: %d %s %v", rec.Code, rec.Body, rec.Header())
	}
	if len(fc.issued) != 1 || fc.issued[0][len(fc.issued[0])-len("alice team-a.vm1"):] != "alice team-a.vm1" {
		t.Errorf("issued %q", fc.issued)
	}
	if rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Managers/team-a.vm1" + action, user: "alice", body: "{}"}); rec.Code != http.StatusForbidden {
		t.Errorf("Basic credentials: %d %s, want 403", rec.Code, rec.Body)
	}
	bobToken, _ := login(t, e, "bob", "bob-pw")
	out := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Managers/team-a.vm1" + action, token: bobToken, body: "{}"})
	absent := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Managers/team-a.vm9" + action, token: bobToken, body: "{}"})
	if out.Code != http.StatusNotFound || absent.Code != http.StatusNotFound {
		t.Errorf("scoped away: %d, absent: %d, want 404 both", out.Code, absent.Code)
	}
	if len(fc.issued) != 1 {
		t.Errorf("tokens issued to refused callers: %q", fc.issued)
	}
	if rec := e.do(t, req{method: http.MethodDelete, path: location, token: token}); rec.Code != http.StatusNoContent {
		t.Fatalf("logout: %d %s", rec.Code, rec.Body)
	}
	if len(fc.ended) != 1 || !slices.Contains(fc.ended, location[len(location)-len(fc.ended[0]):]) {
		t.Errorf("consoles ended for sessions %q after logging out %s", fc.ended, location)
	}
}
