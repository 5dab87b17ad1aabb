package redfish

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/redfish-bridge/redfish-bridge/metrics"
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
	}, backendsOf(base.fake, base.auth))
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

// TestObserveLabelsBounded performs the attack of docs/reliability.md row 13: requests
// with random 8 KiB methods and random unmatched paths, unauthenticated,
// observed by the bridge's metrics. The request series must stay a handful
// (every label from a closed set) and a /metrics scrape small.
func TestObserveLabelsBounded(t *testing.T) {
	const (
		attacks = 300
		// maxSeries is what the attack's paths may make: a few routes and
		// "unmatched", by method ("other", GET) and status.
		maxSeries = 16
		// maxScrape bounds a whole /metrics answer (Go and process
		// collectors included: ~10 KiB); without closed label sets the
		// attack made it ~40 MB.
		maxScrape = 256 << 10
	)
	base := newEnv(t)
	m := metrics.New()
	e, err := New(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666", Observe: m.ObserveRequest},
		backendsOf(base.fake, base.auth))
	if err != nil {
		t.Fatal(err)
	}
	env := &env{fake: base.fake, e: e, auth: base.auth}
	garbage := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'A' + byte(rand.IntN(26))
		}
		return string(b)
	}
	for i := range attacks {
		paths := []string{"/redfish/v1/Systems", "/redfish/v1/Systems/team-a.vm1", "/redfish/v1/" + garbage(32),
			"/redfish/v1/Systems/team-a.vm1/" + garbage(32), "/" + garbage(64)}
		env.do(t, req{method: garbage(8 << 10), path: paths[i%len(paths)]})
		env.do(t, req{path: paths[2+i%3]})
	}
	series, err := testutil.GatherAndCount(m.Registry, "redfish_bridge_http_requests_total")
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m.Handler(func() error { return nil }).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/metrics", nil))
	t.Logf("%d requests with 8 KiB methods and %d to random paths: %d request series, /metrics %d bytes",
		attacks, attacks, series, rec.Body.Len())
	if series > maxSeries {
		t.Errorf("%d request series after the attack, want at most %d", series, maxSeries)
	}
	if rec.Code != http.StatusOK || rec.Body.Len() > maxScrape {
		t.Errorf("/metrics after the attack: %d, %d bytes, want 200 and at most %d", rec.Code, rec.Body.Len(), maxScrape)
	}
}

// TestAuthenticatedHook: Config.Authenticated is called for each request
// that authenticated (Basic, token, a login), with its user, and for no
// other, so the connection limit counts a connection against the right
// user and never takes an unauthenticated connection for an authenticated
// one.
func TestAuthenticatedHook(t *testing.T) {
	base := newEnv(t)
	var calls []string
	e, err := New(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666",
		Authenticated: func(ctx context.Context, user string) {
			if ctx == nil {
				t.Error("Authenticated called without a context")
			}
			calls = append(calls, user)
		}},
		backendsOf(base.fake, base.auth))
	if err != nil {
		t.Fatal(err)
	}
	env := &env{fake: base.fake, e: e, auth: base.auth}
	loginBody := func(pw string) string { return `{"UserName":"alice","Password":"` + pw + `"}` }
	var token string
	for _, tc := range []struct {
		name string
		r    func() req
		want []string
	}{
		{"public resource", func() req { return req{path: "/redfish/v1"} }, nil},
		{"no credentials", func() req { return req{path: "/redfish/v1/Systems"} }, nil},
		{"wrong password", func() req {
			return req{path: "/redfish/v1/Systems", header: map[string]string{"Authorization": "Basic YWRtaW46bm8="}}
		}, nil},
		{"bad token", func() req { return req{path: "/redfish/v1/Systems", token: "nope"} }, nil},
		{"failed login", func() req {
			return req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions", body: loginBody("wrong")}
		}, nil},
		{"Basic", func() req { return req{path: "/redfish/v1/Systems", user: "admin"} }, []string{"admin"}},
		{"login", func() req {
			return req{method: http.MethodPost, path: "/redfish/v1/SessionService/Sessions", body: loginBody("alice-pw")}
		}, []string{"alice"}},
		{"token", func() req { return req{path: "/redfish/v1/Systems", token: token} }, []string{"alice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			rec := env.do(t, tc.r())
			if tok := rec.Header().Get(HeaderAuthToken); tok != "" {
				token = tok
			}
			if diff := cmp.Diff(tc.want, calls); diff != "" {
				t.Errorf("status %d: Authenticated calls (-want +got):\n%s", rec.Code, diff)
			}
		})
	}
}
