package redfish

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkGetSystemKept is one GET of an unchanged system through the
// whole service (middleware, Basic auth, kept body) without TLS: what the
// bridge adds to a GET beyond net/http (go test -bench GetSystemKept
// -benchmem ./redfish/).
func BenchmarkGetSystemKept(b *testing.B) {
	e := newEnv(&testing.T{})
	benchGET(b, e, "alice", "alice-pw", "/redfish/v1/Systems/team-a.vm1")
}

// benchGET GETs target as user through the whole service, b.Loop times.
func benchGET(b *testing.B, e *env, user, password, target string) {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.SetBasicAuth(user, password)
	req.RemoteAddr = "192.0.2.1:1234"
	for b.Loop() {
		rec := httptest.NewRecorder()
		e.e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", target, rec.Code)
		}
	}
}

// BenchmarkGetSystemRoundRobin is one GET of a System through the whole
// service, reading 10,000 unchanged systems round robin as Ironic's
// power-state sync does, reporting the share of GETs that hit a kept body
// and the bytes per kept body (go test -run '^$' -bench
// GetSystemRoundRobin -benchmem ./redfish/). "fits": the budget holds
// every body (10,000 systems); "over": it holds 1/10 of them, as the
// default budget holds ~1/8 of 100,000 systems' (the miss path);
// "over-json.Marshal": the same, encoded by json.Marshal, as before
// appendJSON; "over-hot": "over" with a GET of one of 3 hot systems (as
// Ironic polls those it provisions; not kept at the start) after every 10
// of the round robin, reporting also the share of those that hit
// (hot-hit/op).
func BenchmarkGetSystemRoundRobin(b *testing.B) {
	const n = 10000
	e := newEnv(&testing.T{})
	uris := []string{"/redfish/v1/Systems/team-a.vm1", "/redfish/v1/Systems/team-a.vm2", "/redfish/v1/Systems/team-b.vm3"}
	for i := range n - len(uris) {
		name := fmt.Sprintf("vm%05d", i)
		e.fake.add("team-c", name, nil, "52:54:00:00:00:03")
		uris = append(uris, "/redfish/v1/Systems/team-c."+name)
	}
	reqs := make([]*http.Request, len(uris))
	for i, uri := range uris {
		reqs[i] = httptest.NewRequest(http.MethodGet, uri, nil)
		reqs[i].SetBasicAuth("admin", "admin-pw")
		reqs[i].RemoteAddr = "192.0.2.1:1234"
	}
	get := func(b *testing.B, r *http.Request) {
		rec := httptest.NewRecorder()
		e.e.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", r.URL, rec.Code)
		}
	}
	gets := func() int {
		e.fake.mu.Lock()
		defer e.fake.mu.Unlock()
		return e.fake.gets
	}
	for _, bc := range []struct {
		name     string
		over     bool
		marshal  func(obj) ([]byte, error)
		hotEvery int
	}{
		{"fits", false, marshalBody, 0},
		{"over", true, marshalBody, 0},
		{"over-json.Marshal", true, func(body obj) ([]byte, error) { return json.Marshal(body) }, 0},
		{"over-hot", true, marshalBody, 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			kept := &e.srv.systemBodies
			kept.mu.Lock()
			kept.entries, kept.bytes, kept.budget = nil, 0, 0
			kept.mu.Unlock()
			marshalResource = bc.marshal
			defer func() { marshalResource = marshalBody }()
			for _, r := range reqs { // one round first: the steady state
				get(b, r)
			}
			perBody := kept.size() / kept.len()
			if bc.over {
				kept.mu.Lock()
				kept.entries, kept.bytes, kept.budget = nil, 0, n/10*perBody
				kept.mu.Unlock()
				for _, r := range reqs {
					get(b, r)
				}
			}
			rendered, i, hot, hotRendered := gets(), 0, 0, 0
			for b.Loop() {
				if bc.hotEvery > 0 && i%bc.hotEvery == 0 {
					before := gets()
					get(b, reqs[len(reqs)-1-hot%3]) // not kept at the start
					hot++
					hotRendered += gets() - before
				}
				get(b, reqs[i])
				i = (i + 1) % len(reqs)
			}
			b.ReportMetric(1-float64(gets()-rendered)/float64(b.N+hot), "hit/op")
			if hot > 0 {
				b.ReportMetric(1-float64(hotRendered)/float64(hot), "hot-hit/op")
			}
			b.ReportMetric(float64(perBody), "B/kept")
		})
	}
}
