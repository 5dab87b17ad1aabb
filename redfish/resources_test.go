package redfish

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkServed GETs uri as admin and checks what every resource must be:
// 200, valid against its DMTF schema, Allow (GET and HEAD, no write
// method unless write names it), Link and ETag headers like every other
// resource, and the properties in want.
func checkServed(t *testing.T, e *env, v *validator, uri, write string, want map[string]any) map[string]any {
	t.Helper()
	get := e.do(t, req{path: uri, user: "admin"})
	if get.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", uri, get.Code, get.Body)
	}
	body := decode(t, get)
	v.validate(t, uri, body)
	checkDescribed(t, uri, get, e.do(t, req{method: http.MethodHead, path: uri, user: "admin"}), body)
	for _, m := range []string{"PATCH", "POST", "DELETE", "PUT"} {
		if got := strings.Contains(get.Header().Get("Allow"), m); got != (m == write) {
			t.Errorf("%s: Allow %q: %s allowed %v", uri, get.Header().Get("Allow"), m, got)
		}
	}
	got := map[string]any{}
	for k := range want {
		got[k] = body[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET %s (-want +got):\n%s", uri, diff)
	}
	return body
}

// checkScoped checks that a user scoped away from team-a.vm2 (carol) gets
// for sub of that system exactly what she gets for a system that does not
// exist: 404, same body but for the id.
func checkScoped(t *testing.T, e *env, base, sub string) {
	t.Helper()
	answer := func(id string) (int, string) {
		rec := e.do(t, req{user: "carol", path: base + id + sub})
		return rec.Code, strings.ReplaceAll(rec.Body.String(), id, "ID")
	}
	outCode, outBody := answer("team-a.vm2")
	absentCode, absentBody := answer("team-a.vm9")
	if outCode != http.StatusNotFound {
		t.Errorf("GET %s of an out-of-scope system: %d, want 404", sub, outCode)
	}
	if diff := cmp.Diff([]any{absentCode, absentBody}, []any{outCode, outBody}); diff != "" {
		t.Errorf("GET %s: out of scope differs from absent (-absent +out of scope):\n%s", sub, diff)
	}
	if rec := e.do(t, req{user: "carol", path: base + "team-a.vm1" + sub}); rec.Code != http.StatusOK {
		t.Errorf("GET %s of a system in scope: %d %s", sub, rec.Code, rec.Body)
	}
}
