package redfish

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQueryParameters checks that only $top and $skip (on collections) and
// $expand with $levels=1 are served, on GET, and that every other Redfish
// query is refused rather than ignored; a refused query on an action runs
// nothing.
func TestQueryParameters(t *testing.T) {
	sys := "/redfish/v1/Systems"
	reset := sys + "/team-a.vm1/Actions/ComputerSystem.Reset"
	tests := []struct {
		name string
		r    req
		want errorInfo
	}{
		{"expand two levels", req{path: sys + "?$expand=.($levels=2)", user: "admin"}, errorInfo{Status: 501, IDs: []string{"QueryNotSupported"}}},
		{"expand encoded two levels", req{path: sys + "?%24expand=*%28%24levels%3D3%29", user: "admin"}, errorInfo{Status: 501, IDs: []string{"QueryNotSupported"}}},
		{"expand no value", req{path: sys + "?$expand=", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryParameterValueFormatError"}}},
		{"expand a property", req{path: sys + "?$expand=Members", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryParameterValueFormatError"}}},
		{"expand zero levels", req{path: sys + "?$expand=.($levels=0)", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryParameterValueFormatError"}}},
		{"expand levels not a number", req{path: sys + "?$expand=*($levels=one)", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryParameterValueFormatError"}}},
		{"expand unclosed", req{path: sys + "?$expand=.($levels=1", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryParameterValueFormatError"}}},
		{"expand twice", req{path: sys + "?$expand=.&$expand=*", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryParameterValueFormatError"}}},
		{"select", req{path: sys + "/team-a.vm1?$select=Name", user: "admin"}, errorInfo{Status: 501, IDs: []string{"QueryNotSupported"}}},
		{"filter", req{path: sys + "?$filter=Name%20eq%20'x'", user: "admin"}, errorInfo{Status: 501, IDs: []string{"QueryNotSupported"}}},
		{"unknown dollar", req{path: sys + "?$levels=2", user: "admin"}, errorInfo{Status: 501, IDs: []string{"QueryNotSupported"}}},
		{"only", req{path: sys + "?only", user: "admin"}, errorInfo{Status: 501, IDs: []string{"QueryNotSupported"}}},
		{"excerpt", req{path: sys + "/team-a.vm1?excerpt", user: "admin"}, errorInfo{Status: 501, IDs: []string{"QueryNotSupported"}}},
		{"top not a number", req{path: sys + "?$top=x", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryParameterValueFormatError"}}},
		{"skip negative", req{path: sys + "?$skip=-1", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryParameterValueFormatError"}}},
		{"top twice", req{path: sys + "?$top=1&$top=2", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryParameterValueFormatError"}}},
		{"top on a resource", req{path: sys + "/team-a.vm1?$top=1", user: "admin"}, errorInfo{Status: 400, IDs: []string{"QueryNotSupportedOnResource"}}},
		{"top on an action", req{method: http.MethodPost, path: reset + "?$top=1", user: "admin", body: `{"ResetType":"On"}`}, errorInfo{Status: 400, IDs: []string{"QueryNotSupportedOnOperation"}}},
		{"expand on an action", req{method: http.MethodPost, path: reset + "?$expand=.", user: "admin", body: `{"ResetType":"On"}`}, errorInfo{Status: 400, IDs: []string{"QueryNotSupportedOnOperation"}}},
		// Authentication comes first: an unauthenticated caller gets 401
		// whatever its query (docs/reliability.md row 15).
		{"expand unauthenticated", req{path: sys + "?$expand=."}, errorInfo{Status: 401, IDs: []string{"NoValidSession"}}},
		{"top not a number unauthenticated", req{path: sys + "?$top=x"}, errorInfo{Status: 401, IDs: []string{"NoValidSession"}}},
		{"expand on an action unauthenticated", req{method: http.MethodPost, path: reset + "?$expand=.", body: `{"ResetType":"On"}`}, errorInfo{Status: 401, IDs: []string{"NoValidSession"}}},
		// What the root's $expand shows is not public.
		{"expand on a public resource unauthenticated", req{path: "/redfish/v1?$expand=."}, errorInfo{Status: 401, IDs: []string{"NoValidSession"}}},
	}
	e := newEnv(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, errInfo(t, e.do(t, tc.r))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if calls := e.fake.takeCalls(); len(calls) != 0 {
		t.Errorf("refused requests wrote %v", calls)
	}
	// Parameters that are not Redfish queries are ignored.
	if rec := e.do(t, req{path: sys + "?foo=bar", user: "admin"}); rec.Code != http.StatusOK {
		t.Errorf("?foo=bar: %d %s", rec.Code, rec.Body)
	}
	root := e.get(t, "", "/redfish/v1")
	features := root["ProtocolFeaturesSupported"].(map[string]any)
	wantExpand := map[string]any{"ExpandAll": true, "Levels": true, "Links": true, "NoLinks": true, "MaxLevels": float64(1)}
	if diff := cmp.Diff(wantExpand, features["ExpandQuery"]); diff != "" {
		t.Errorf("ExpandQuery (-want +got):\n%s", diff)
	}
	if features["TopSkipQuery"] != true ||
		features["OnlyMemberQuery"] != false || features["SelectQuery"] != false || features["FilterQuery"] != false {
		t.Errorf("ProtocolFeaturesSupported %v does not say what is served", features)
	}
}

// TestTopSkipPages follows Members@odata.nextLink through the Systems
// collection one member at a time and gets every member once, in order.
func TestTopSkipPages(t *testing.T) {
	e := newEnv(t)
	all := e.get(t, "admin", "/redfish/v1/Systems")["Members"].([]any)
	if len(all) != 3 {
		t.Fatalf("%d systems, want 3", len(all))
	}
	var got []any
	next := "/redfish/v1/Systems?$top=1"
	for pages := 0; next != ""; pages++ {
		if pages > len(all) {
			t.Fatalf("more pages than members; last %s", next)
		}
		page := e.get(t, "admin", next)
		if page["Members@odata.count"] != float64(len(all)) {
			t.Errorf("%s: Members@odata.count %v, want the total %d", next, page["Members@odata.count"], len(all))
		}
		ms := page["Members"].([]any)
		if len(ms) != 1 {
			t.Errorf("%s: %d members, want 1", next, len(ms))
		}
		got = append(got, ms...)
		next, _ = page["Members@odata.nextLink"].(string)
	}
	if diff := cmp.Diff(all, got); diff != "" {
		t.Errorf("paged members (-all +paged):\n%s", diff)
	}
	for _, tc := range []struct {
		query string
		want  int
		next  bool
	}{{"$skip=1", 2, false}, {"$skip=5", 0, false}, {"$top=0", 0, false}, {"$top=2&$skip=2", 1, false}, {"$top=5", 3, false}} {
		page := e.get(t, "admin", "/redfish/v1/Systems?"+tc.query)
		_, next := page["Members@odata.nextLink"]
		if n := len(page["Members"].([]any)); n != tc.want || next != tc.next {
			t.Errorf("?%s: %d members (want %d), nextLink %t (want %t)", tc.query, n, tc.want, next, tc.next)
		}
	}
}

// TestODataVersion checks that a request for another OData version is 412
// with a Base message, and that 4.0 or no header is served.
func TestODataVersion(t *testing.T) {
	e := newEnv(t)
	for _, v := range []string{"4.1", "4.01", "5.0", "x"} {
		rec := e.do(t, req{path: "/redfish/v1/Systems", user: "admin", header: map[string]string{"OData-Version": v}})
		if got := errInfo(t, rec); got.Status != http.StatusPreconditionFailed || got.IDs[0] != "GeneralError" {
			t.Errorf("OData-Version %s: %+v", v, got)
		}
	}
	rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", user: "admin",
		body: `{"ResetType":"On"}`, header: map[string]string{"OData-Version": "4.1"}})
	if rec.Code != http.StatusPreconditionFailed {
		t.Errorf("reset with OData-Version 4.1: %d", rec.Code)
	}
	if calls := e.fake.takeCalls(); len(calls) != 0 {
		t.Errorf("a refused request wrote %v", calls)
	}
	for _, h := range []map[string]string{nil, {"OData-Version": "4.0"}} {
		if rec := e.do(t, req{path: "/redfish/v1/Systems", user: "admin", header: h}); rec.Code != http.StatusOK {
			t.Errorf("OData-Version %v: %d", h, rec.Code)
		}
	}
}
