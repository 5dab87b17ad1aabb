package redfish

import (
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
