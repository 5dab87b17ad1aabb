package redfish

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// readOnlyPath fills a route template's parameters with objects of the
// ReadOnly user rita's scope (team-a.vm1 exists; its slot cd0 holds
// certificate cert).
func readOnlyPath(template, cert, sub, sid string) string {
	r := strings.NewReplacer(":id", "team-a.vm1", ":slot", "cd0", ":cert", cert, ":sub", sub, ":sid", sid)
	return r.Replace(template)
}

// TestReadOnlyWritesRefused is the attack of docs/reliability.md row 215:
// a ReadOnly user (the users Secret's <user>.role) sends every write the
// service routes (echo's route table, crawled: a write route added later
// is covered without editing the test), with Basic credentials and with a
// session token, on objects of its scope. Each is refused 403
// InsufficientPrivilege and reaches no backend; the two writes open to it
// do only what a ReadOnly user may: a console token is view-only, and a
// session of its own other than the caller's cannot be ended. It reads
// everything its scope shows (a crawl), and its account says ReadOnly.
func TestReadOnlyWritesRefused(t *testing.T) {
	e, fc := newConsoleEnv(t)
	key := system.Key{Namespace: "team-a", Name: "vm1"}
	cert := addTestCertificate(t, e.fake, key, "cd0").ID
	sub := e.subscribe(t, "alice")
	sub = sub[strings.LastIndex(sub, "/")+1:]
	token, own := login(t, e, "rita", "rita-pw")
	_, other := login(t, e, "rita", "rita-pw")
	otherID := other[strings.LastIndex(other, "/")+1:]
	e.fake.takeCalls()

	open := map[string]bool{} // "METHOD template" of the writes a ReadOnly caller reaches
	for _, r := range e.srv.resources {
		for _, ep := range r.endpoints {
			if ep.public || ep.readOnlyToo {
				open[ep.method+" "+ep.path] = true
			}
		}
	}
	writes := 0
	for _, rt := range e.e.Routes() {
		if rt.Method == http.MethodGet || rt.Method == http.MethodHead || open[rt.Method+" "+strings.TrimSuffix(rt.Path, "/")] {
			continue
		}
		writes++
		path := readOnlyPath(rt.Path, cert, sub, otherID)
		for _, as := range []req{{user: "rita"}, {token: token}} {
			as.method, as.path, as.body = rt.Method, path, `{"ResetType":"On"}`
			rec := e.do(t, as)
			if rec.Code != http.StatusForbidden {
				t.Errorf("%s %s as ReadOnly (basic %t): %d %s, want 403 InsufficientPrivilege", rt.Method, path, as.user != "", rec.Code, rec.Body)
			} else if got := errInfo(t, rec); len(got.IDs) != 1 || got.IDs[0] != "InsufficientPrivilege" {
				t.Errorf("%s %s as ReadOnly (basic %t): %d %s, want 403 InsufficientPrivilege", rt.Method, path, as.user != "", rec.Code, rec.Body)
			}
		}
	}
	if writes < 20 {
		t.Fatalf("only %d write routes crawled: the route table was not read", writes)
	}
	if calls := e.fake.takeCalls(); len(calls) != 0 {
		t.Errorf("refused writes reached the backend: %q", calls)
	}
	if got := e.get(t, "alice", subscriptionsURI+"/"+sub); got["Id"] != sub {
		t.Errorf("alice's subscription after the refused writes: %v", got)
	}

	t.Run("console token is view-only", func(t *testing.T) {
		rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Managers/team-a.vm1/Actions/Oem/" + consoleTokenAction, token: token, body: "{}"})
		if rec.Code != http.StatusOK || decode(t, rec)["ViewOnly"] != true || len(fc.viewOnly) != 1 || !fc.viewOnly[0] {
			t.Errorf("console token: %d %s, issued view-only %v", rec.Code, rec.Body, fc.viewOnly)
		}
	})
	t.Run("another session of its own is not ended", func(t *testing.T) {
		rec := e.do(t, req{method: http.MethodDelete, path: other, token: token})
		if got := errInfo(t, rec); got.Status != http.StatusForbidden {
			t.Errorf("DELETE %s: %d %s, want 403", other, rec.Code, rec.Body)
		}
	})
	t.Run("reads its scope, account ReadOnly", func(t *testing.T) {
		seen := crawl(t, e, "rita")
		if seen["/redfish/v1/Systems/team-a.vm1"] == nil || seen["/redfish/v1/Systems/team-b.vm1"] != nil {
			t.Errorf("crawl as rita: team-a.vm1 %v, team-b.vm1 %v", seen["/redfish/v1/Systems/team-a.vm1"] != nil, seen["/redfish/v1/Systems/team-b.vm1"] != nil)
		}
		acct := e.get(t, "rita", accountsURI+"/rita")
		want := map[string]any{"RoleId": "ReadOnly", "Role": "/redfish/v1/AccountService/Roles/ReadOnly"}
		got := map[string]any{"RoleId": acct["RoleId"], "Role": acct["Links"].(map[string]any)["Role"].(map[string]any)["@odata.id"]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rita's account (-want +got):\n%s", diff)
		}
	})
	t.Run("logs out its own session", func(t *testing.T) {
		if rec := e.do(t, req{method: http.MethodDelete, path: own, token: token}); rec.Code != http.StatusNoContent {
			t.Errorf("logout: %d %s, want 204", rec.Code, rec.Body)
		}
	})
	t.Run("an Operator's write is not refused", func(t *testing.T) {
		rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", user: "alice", body: `{"ResetType":"On"}`})
		if rec.Code/100 != 2 {
			t.Errorf("alice's reset: %d %s", rec.Code, rec.Body)
		}
	})
}
