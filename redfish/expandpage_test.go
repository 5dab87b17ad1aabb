package redfish

import (
	"fmt"
	"net/http"
	"testing"
)

// TestExpandPaged performs the attack of docs/reliability.md row 117: one
// $expand of the Systems collection of a 1000-VM tenant. The answer holds
// at most maxExpandedMembers expanded members (with or without a larger
// $top), Members@odata.count stays the total, and following
// Members@odata.nextLink yields every system exactly once, expanded.
func TestExpandPaged(t *testing.T) {
	const vms = 1000
	e := newEnv(t)
	for i := range vms {
		e.fake.add("team-a", fmt.Sprintf("flood%04d", i), nil, "")
	}
	total := vms + 3 // and newFake's
	for _, start := range []string{
		"/redfish/v1/Systems?$expand=*",
		"/redfish/v1/Systems?$expand=.($levels=1)",
		"/redfish/v1/Systems?$top=1000&$expand=.",
	} {
		t.Run(start, func(t *testing.T) {
			seen := map[string]int{}
			pages, largest := 0, 0
			for next := start; next != ""; pages++ {
				rec := e.do(t, req{path: next, user: "admin"})
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s: %d %s", next, rec.Code, rec.Body)
				}
				largest = max(largest, rec.Body.Len())
				body := decode(t, rec)
				members, _ := body["Members"].([]any)
				if len(members) > maxExpandedMembers {
					t.Fatalf("GET %s: %d members expanded in one answer (%d bytes), want at most %d",
						next, len(members), rec.Body.Len(), maxExpandedMembers)
				}
				if n, _ := body["Members@odata.count"].(float64); int(n) != total {
					t.Errorf("GET %s: Members@odata.count %v, want %d", next, body["Members@odata.count"], total)
				}
				for _, m := range members {
					o, _ := m.(map[string]any)
					id, _ := o["Id"].(string)
					if id == "" {
						t.Fatalf("GET %s: a member not expanded: %v", next, m)
					}
					seen[id]++
				}
				next, _ = body["Members@odata.nextLink"].(string)
			}
			dup := 0
			for _, n := range seen {
				if n > 1 {
					dup++
				}
			}
			if len(seen) != total || dup > 0 {
				t.Errorf("%d systems seen over %d pages (%d more than once), want %d each once", len(seen), pages, dup, total)
			}
			t.Logf("%d systems expanded over %d answers, the largest %d bytes", len(seen), pages, largest)
		})
	}
}
