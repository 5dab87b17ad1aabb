package redfish

import (
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestObserve checks the metrics hook: one call per request with the route
// template (not the concrete path, so label values stay bounded).
func TestObserve(t *testing.T) {
	base := newEnv(t)
	type call struct {
		Method, Route string
		Status        int
	}
	var mu sync.Mutex
	var got []call
	e, err := New(Config{
		ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666", Logger: slog.New(slog.DiscardHandler),
		Observe: func(method, route string, status int, d time.Duration) {
			if d <= 0 {
				t.Errorf("duration %v for %s %s", d, method, route)
			}
			mu.Lock()
			defer mu.Unlock()
			got = append(got, call{method, route, status})
		},
	}, Backends{Systems: base.fake, Power: base.fake, Boot: base.fake, Media: base.fake, Trust: base.fake, Auth: base.auth})
	if err != nil {
		t.Fatal(err)
	}
	env := &env{fake: base.fake, e: e, auth: base.auth}
	for _, r := range []req{
		{path: "/redfish/v1"},
		{path: "/redfish/v1/Systems/team-a.vm1", user: "admin"},
		{path: "/redfish/v1/Systems/team-a.vm2/", user: "admin"},
		{path: "/redfish/v1/Systems/team-a.vm1"},
		{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", body: `{"ResetType":"On"}`, user: "admin"},
		{path: "/no/such/thing/42"},
	} {
		env.do(t, r)
	}
	want := []call{
		{"GET", "/redfish/v1", 200},
		{"GET", "/redfish/v1/Systems/:id", 200},
		{"GET", "/redfish/v1/Systems/:id", 200},
		{"GET", "/redfish/v1/Systems/:id", 401},
		{"POST", "/redfish/v1/Systems/:id/Actions/ComputerSystem.Reset", 204},
		{"GET", "", 404},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observed requests (-want +got):\n%s", diff)
	}
}
