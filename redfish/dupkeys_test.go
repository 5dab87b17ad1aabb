package redfish

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDuplicateKey(t *testing.T) {
	type result struct {
		Path string
		Dup  bool
	}
	tests := []struct {
		name, body string
		want       result
	}{
		{name: "none", body: `{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`},
		{name: "top level", body: `{"a":1,"a":2}`, want: result{"#/a", true}},
		{name: "same value", body: `{"a":1,"b":2,"a":1}`, want: result{"#/a", true}},
		{name: "nested", body: `{"Boot":{"x":{"y":1},"T":1,"T":2}}`, want: result{"#/Boot/T", true}},
		{name: "after a nested object", body: `{"Boot":{"x":1},"Boot":2}`, want: result{"#/Boot", true}},
		{name: "in an array", body: `{"a":[1,{"k":1},{"k":1,"k":2}]}`, want: result{"#/a/2/k", true}},
		{name: "escaped", body: `{"UserName":"a","\u0055serName":"b"}`, want: result{"#/UserName", true}},
		{name: "case differs", body: `{"UserName":"a","username":"b"}`},
		{name: "pointer escapes", body: `{"a/b~":{"c":1,"c":2}}`, want: result{"#/a~1b~0/c", true}},
		{name: "empty key", body: `{"":1,"":2}`, want: result{"#/", true}},
		{name: "not an object", body: `[1,1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got result
			got.Path, got.Dup = duplicateKey([]byte(tt.body))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("duplicateKey(%s) (-want +got):\n%s", tt.body, d)
			}
		})
	}
}

// TestDuplicatePropertyRefused sends parser-differential bodies (the last
// duplicate wins in encoding/json, the first in other parsers): each is
// 400 PropertyDuplicate naming the property, and nothing is done.
func TestDuplicatePropertyRefused(t *testing.T) {
	tests := []struct {
		name string
		r    req
		want errorInfo
	}{
		{
			name: "reset",
			r:    req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", user: "admin", body: `{"ResetType":"On","ResetType":"ForceOff"}`},
			want: errorInfo{Status: 400, IDs: []string{"PropertyDuplicate"}, Related: []string{"#/ResetType"}},
		},
		{
			name: "nested and escaped",
			r:    req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", user: "admin", body: `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverride\u0054arget":"Pxe"}}`},
			want: errorInfo{Status: 400, IDs: []string{"PropertyDuplicate"}, Related: []string{"#/Boot/BootSourceOverrideTarget"}},
		},
		{
			name: "login",
			r:    req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions", body: `{"UserName":"admin","Password":"x","UserName":"admin"}`},
			want: errorInfo{Status: 400, IDs: []string{"PropertyDuplicate"}, Related: []string{"#/UserName"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			rec := e.do(t, tt.r)
			if d := cmp.Diff(tt.want, errInfo(t, rec)); d != "" {
				t.Errorf("%s %s %s (-want +got):\n%s", tt.r.method, tt.r.path, tt.r.body, d)
			}
			if calls := e.fake.takeCalls(); len(calls) != 0 {
				t.Errorf("backend calls %v, want none", calls)
			}
		})
	}
}
