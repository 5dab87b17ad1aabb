package redfish

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestWriteablePropertiesTrue: @Redfish.WriteableProperties is served
// exactly where it is true. On every resource a crawl reaches: a resource
// that takes PATCH lists its writable properties (at the top or in a
// nested object, like Boot), one that does not lists none; each listed
// property, PATCHed alone with the value shown, is accepted (204), and
// every other property of the same object (and of the resource's top
// level) is refused (400 PropertyNotWritable).
func TestWriteablePropertiesTrue(t *testing.T) {
	e := newEnv(t)
	want := map[string][]string{
		"/redfish/v1/Systems/team-a.vm1#/Boot":               bootWriteable,
		"/redfish/v1/Systems/team-a.vm1/SecureBoot#/":        {"SecureBootEnable"},
		"/redfish/v1/Systems/team-a.vm1/Bios/Settings#/":     {"Attributes"},
		"/redfish/v1/Systems/team-a.vm1/VirtualMedia/cd0#/":  {"VerifyCertificate"},
		"/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0#/": {"VerifyCertificate"},
	}
	seen := map[string]bool{}
	for uri, body := range crawl(t, e, "admin") {
		if body == nil || strings.HasSuffix(uri, ".json") || uri == "/redfish/v1/odata" {
			continue
		}
		allow := e.do(t, req{method: http.MethodHead, path: uri, user: "admin"}).Header().Get("Allow")
		annotated := findWriteable(body, nil)
		if strings.Contains(allow, http.MethodPatch) != (len(annotated) > 0) {
			t.Errorf("%s: Allow %q, but @Redfish.WriteableProperties %v", uri, allow, annotated)
		}
		if strings.Contains(allow, http.MethodPatch) && !slices.ContainsFunc(annotated, func(a annotation) bool { return len(a.path) == 0 }) {
			// nothing writable at the top: every top-level property is refused
			annotated = append(annotated, annotation{})
		}
		for _, a := range annotated {
			path, names := a.path, a.names
			where := uri + "#/" + strings.Join(path, "/")
			if w, ok := want[where]; ok {
				seen[where] = true
				if !slices.Equal(w, names) {
					t.Errorf("%s: @Redfish.WriteableProperties %v, want %v", where, names, w)
				}
			}
			t.Run(where, func(t *testing.T) {
				obj := body
				for _, p := range path {
					obj = obj[p].(map[string]any)
				}
				for name, value := range obj {
					if strings.Contains(name, "@") {
						continue
					}
					patch := map[string]any{name: value}
					for i := len(path) - 1; i >= 0; i-- {
						patch = map[string]any{path[i]: patch}
					}
					raw, err := json.Marshal(patch)
					if err != nil {
						t.Fatal(err)
					}
					rec := e.do(t, req{method: http.MethodPatch, path: uri, user: "admin", body: string(raw)})
					if slices.Contains(names, name) {
						if rec.Code/100 != 2 {
							t.Errorf("PATCH %s of writable %s: %d %s", raw, name, rec.Code, rec.Body)
						}
						continue
					}
					if sub, ok := value.(map[string]any); ok && len(findWriteable(sub, nil)) > 0 {
						continue // writable inside, checked on its own
					}
					if got := errInfo(t, rec); got.Status != http.StatusBadRequest || !slices.Equal(got.IDs, []string{"PropertyNotWritable"}) {
						t.Errorf("PATCH %s of %s, not listed: %+v, want 400 PropertyNotWritable", raw, name, got)
					}
				}
			})
		}
	}
	for where := range want {
		if !seen[where] {
			t.Errorf("%s: no @Redfish.WriteableProperties", where)
		}
	}
}

// annotation is one @Redfish.WriteableProperties: the path to the object
// that carries it and the names it lists.
type annotation struct {
	path  []string
	names []string
}

// findWriteable returns the @Redfish.WriteableProperties of m and of the
// objects nested in it.
func findWriteable(m map[string]any, path []string) []annotation {
	var out []annotation
	if list, ok := m[writeableProperties].([]any); ok {
		a := annotation{path: path}
		for _, n := range list {
			s, _ := n.(string)
			a.names = append(a.names, s)
		}
		out = append(out, a)
	}
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			out = append(out, findWriteable(sub, append(slices.Clone(path), k))...)
		}
	}
	return out
}
