package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// TestExpandQuery sends what OpenStack Ironic's sensor collection sends on
// the Chassis collection and a system's Storage collection,
// $expand=.($levels=1), to the bridge of each CRD variant over HTTPS, and
// checks that each answers 200 with every member expanded, as its own GET
// answers it; $levels=2 stays 501.
func TestExpandQuery(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		c := newRFClient(env)
		expand := "?$expand=" + url.QueryEscape(".($levels=1)")
		sys := "/redfish/v1/Systems/" + sysID(vmConformance)
		for coll, want := range map[string]string{
			"/redfish/v1/Chassis": "/redfish/v1/Chassis/" + sysID(vmConformance),
			sys + "/Storage":      sys + "/Storage/default",
		} {
			got := c.get(t, coll+expand).body
			members, _ := got["Members"].([]any)
			found := false
			for _, m := range members {
				m := m.(map[string]any)
				uri, _ := m["@odata.id"].(string)
				found = found || uri == want
				own := c.do(t, http.MethodGet, uri, "", nil)
				if own.status == http.StatusNotFound {
					continue // a VM another test deleted meanwhile
				}
				if strings.HasPrefix(uri, "/redfish/v1/Chassis/") {
					// A chassis shows its system's PowerState: other
					// tests power their VMs meanwhile.
					for _, k := range []string{"PowerState", "@odata.etag"} {
						delete(own.body, k)
						delete(m, k)
					}
				}
				if diff := cmp.Diff(own.body, m); diff != "" {
					t.Errorf("%s member %s (-its own GET +expanded):\n%s", coll, uri, diff)
				}
			}
			if !found {
				t.Errorf("%s%s: %s not among the expanded members %v", coll, expand, want, members)
			}
		}
		if got := c.do(t, http.MethodGet, "/redfish/v1/Chassis?$expand="+url.QueryEscape(".($levels=2)"), "", nil); got.status != http.StatusNotImplemented {
			t.Errorf("$levels=2: %d, want 501", got.status)
		}
	})
}
