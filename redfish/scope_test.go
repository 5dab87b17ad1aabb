package redfish

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOutOfScopeAnswersAsAbsent: a user scoped by a label selector (carol:
// team-a, tier=gold) gets for a VM that exists outside the selector
// (team-a.vm2) exactly what it gets for a name that does not exist
// (team-a.vm9): same status, same headers that matter, same body but for
// the name. With docs/reliability.md row 9 (no live read on a cache miss) the
// two also cost the same: one cache lookup.
func TestOutOfScopeAnswersAsAbsent(t *testing.T) {
	e := newEnv(t)
	for _, sub := range []string{"", "/VirtualMedia/cd0", "/Bios", "/SecureBoot", "/Processors"} {
		answer := func(id string) (int, string) {
			rec := e.do(t, req{user: "carol", path: "/redfish/v1/Systems/" + id + sub})
			return rec.Code, strings.ReplaceAll(rec.Body.String(), id, "ID")
		}
		outCode, outBody := answer("team-a.vm2")
		absentCode, absentBody := answer("team-a.vm9")
		if outCode != http.StatusNotFound {
			t.Errorf("GET %s of an out-of-scope VM: %d, want 404", sub, outCode)
		}
		if diff := cmp.Diff([]any{absentCode, absentBody}, []any{outCode, outBody}); diff != "" {
			t.Errorf("GET %s: out of scope differs from absent (-absent +out of scope):\n%s", sub, diff)
		}
	}
}
