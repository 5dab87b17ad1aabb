package redfish

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// checkDescribed checks the headers of a resource's GET and HEAD answers:
// Allow lists GET and HEAD, a Redfish resource links its schema
// (rel=describedby) and carries an ETag equal to its @odata.etag, and
// HEAD's headers say the same as GET's.
func checkDescribed(t *testing.T, uri string, get, head *httptest.ResponseRecorder, body map[string]any) {
	t.Helper()
	for _, rec := range []*httptest.ResponseRecorder{get, head} {
		allow := rec.Header().Get("Allow")
		for _, m := range []string{"GET", "HEAD"} {
			if !strings.Contains(allow, m) {
				t.Errorf("%s: Allow %q lacks %s", uri, allow, m)
			}
		}
	}
	ot, resource := body["@odata.type"].(string)
	if !resource || strings.HasSuffix(uri, ".json") {
		return
	}
	wantLink := "<" + dmtfSchemas + schemaFile(ot) + ">; rel=describedby"
	tag := get.Header().Get("ETag")
	if got := get.Header().Get("Link"); got != wantLink {
		t.Errorf("%s: Link %q, want %q", uri, got, wantLink)
	}
	if _, hasID := body["@odata.id"]; hasID && (tag == "" || body["@odata.etag"] != tag) {
		t.Errorf("%s: ETag %q, @odata.etag %v", uri, tag, body["@odata.etag"])
	}
	for _, h := range []string{"Allow", "Link", "ETag"} {
		if got, want := head.Header().Get(h), get.Header().Get(h); got != want {
			t.Errorf("%s: HEAD %s %q, GET %q", uri, h, got, want)
		}
	}
}

// schemaFile is the schema file a type's local schema check loads
// (schemaFor's file), so Link and the schema check agree.
func schemaFile(odataType string) string {
	f, _, _ := strings.Cut(strings.TrimPrefix(schemaFor(odataType), schemaURLPrefix), "#")
	return f
}

// TestConditionalGet checks If-None-Match: a GET naming the current ETag
// is 304 without a body, one naming an old ETag is 200; and If-Match on a
// PATCH of a resource whose ETag changed is 412.
func TestConditionalGet(t *testing.T) {
	e := newEnv(t)
	for _, uri := range []string{
		"/redfish/v1/Systems/team-a.vm1", "/redfish/v1/AccountService/Accounts/admin",
		"/redfish/v1/Systems", "/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0",
	} {
		t.Run(uri, func(t *testing.T) {
			first := e.do(t, req{path: uri, user: "admin"})
			tag := first.Header().Get("ETag")
			if first.Code != http.StatusOK || tag == "" {
				t.Fatalf("GET: %d, ETag %q", first.Code, tag)
			}
			for _, h := range []string{tag, strings.TrimPrefix(tag, "W/"), `"other", ` + tag, "*"} {
				rec := e.do(t, req{path: uri, user: "admin", header: map[string]string{"If-None-Match": h}})
				if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("ETag") != tag {
					t.Errorf("If-None-Match %s: %d, ETag %q, %d body bytes", h, rec.Code, rec.Header().Get("ETag"), rec.Body.Len())
				}
			}
			rec := e.do(t, req{path: uri, user: "admin", header: map[string]string{"If-None-Match": `W/"old"`}})
			if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
				t.Errorf("If-None-Match old: %d with %d body bytes", rec.Code, rec.Body.Len())
			}
		})
	}
	sys := "/redfish/v1/Systems/team-a.vm1"
	tag := e.do(t, req{path: sys, user: "admin"}).Header().Get("ETag")
	patch := `{"Boot":{"BootSourceOverrideTarget":"Pxe"}}`
	if rec := e.do(t, req{method: http.MethodPatch, path: sys, user: "admin", body: patch, header: map[string]string{"If-Match": tag}}); rec.Code != http.StatusNoContent {
		t.Fatalf("PATCH with the current ETag: %d %s", rec.Code, rec.Body)
	}
	rec := e.do(t, req{method: http.MethodPatch, path: sys, user: "admin", body: `{"Boot":{"BootSourceOverrideTarget":"Cd"}}`, header: map[string]string{"If-Match": tag}})
	if got := errInfo(t, rec); got.Status != http.StatusPreconditionFailed {
		t.Errorf("PATCH with the old ETag: %+v", got)
	}
}
