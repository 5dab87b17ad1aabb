package redfish

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func memberIDs(t *testing.T, m map[string]any) []string {
	t.Helper()
	var out []string
	for _, x := range m["Members"].([]any) {
		out = append(out, x.(map[string]any)["@odata.id"].(string))
	}
	if n := int(m["Members@odata.count"].(float64)); n != len(out) {
		t.Errorf("Members@odata.count %d, %d members", n, len(out))
	}
	return out
}

// TestMemberCollectionsKept checks that the Systems, Managers and Chassis
// collections are rendered once per collection and scope while the
// membership stays the same, that each scope sees only its systems from
// the kept bodies, and that a membership change shows at once.
func TestMemberCollectionsKept(t *testing.T) {
	env := newEnv(t)
	lists := func() int {
		env.fake.mu.Lock()
		defer env.fake.mu.Unlock()
		return env.fake.memberLists
	}
	type look struct {
		user, path string
		want       []string
	}
	all := []string{"/redfish/v1/Systems/team-a.vm1", "/redfish/v1/Systems/team-a.vm2", "/redfish/v1/Systems/team-b.vm3"}
	looks := []look{
		{"admin", "/redfish/v1/Systems", all},
		{"alice", "/redfish/v1/Systems", all[:2]},
		{"bob", "/redfish/v1/Systems", all[2:]},
		{"carol", "/redfish/v1/Systems", all[:1]}, // namespace team-a, label tier=gold
		{"admin", "/redfish/v1/Managers", []string{"/redfish/v1/Managers/team-a.vm1", "/redfish/v1/Managers/team-a.vm2", "/redfish/v1/Managers/team-b.vm3"}},
		{"carol", "/redfish/v1/Chassis", []string{"/redfish/v1/Chassis/team-a.vm1"}},
	}
	for round := range 3 {
		for _, l := range looks {
			if diff := cmp.Diff(l.want, memberIDs(t, env.get(t, l.user, l.path))); diff != "" {
				t.Errorf("round %d: %s as %s (-want +got):\n%s", round, l.path, l.user, diff)
			}
		}
		// Each (collection, scope) rendered once: later rounds are kept.
		if got := lists(); got != len(looks) {
			t.Errorf("round %d: backend listed members %d times, want %d (once per collection and scope)", round, got, len(looks))
		}
	}

	env.fake.add("team-a", "vm4", map[string]string{"tier": "gold"}, "")
	for _, l := range looks[:4] {
		want := slices.Clone(l.want)
		if l.user != "bob" {
			want = slices.Insert(want, len(want)-map[string]int{"admin": 1}[l.user], "/redfish/v1/Systems/team-a.vm4")
		}
		if diff := cmp.Diff(want, memberIDs(t, env.get(t, l.user, l.path))); diff != "" {
			t.Errorf("after a VM was added: %s as %s (-want +got):\n%s", l.path, l.user, diff)
		}
	}
	if got := lists(); got != len(looks)+4 {
		t.Errorf("after a membership change: backend listed members %d times, want %d", got, len(looks)+4)
	}
}
