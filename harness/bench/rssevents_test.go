package bench

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEventSink: the receivers count every record, keep each
// subscription's first ResourcePoweredOn per System, refuse what is not a
// subscription's event, and waitAll returns once every subscription got
// every System's ResourcePoweredOn (woken by the POSTs).
func TestEventSink(t *testing.T) {
	s, err := startEventSink(2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	post := func(path, body string) int {
		resp, err := http.Post("http://"+s.addr+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	on := func(sys string) string {
		return `{"Events":[{"MessageId":"ResourceEvent.1.3.0.ResourcePoweredOn","OriginOfCondition":{"@odata.id":"` + sys + `"}},` +
			`{"MessageId":"ResourceEvent.1.3.0.ResourceChanged","OriginOfCondition":{"@odata.id":"` + sys + `"}}]}`
	}
	paths := []string{"/redfish/v1/Systems/a", "/redfish/v1/Systems/b"}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		done <- s.waitAll(ctx, paths)
	}()
	for _, code := range []int{post("/s/2", on(paths[0])), post("/x", on(paths[0])), post("/s/0", "{")} {
		if code != http.StatusBadRequest {
			t.Errorf("a POST that is no subscription's event answered %d, want 400", code)
		}
	}
	for _, sub := range []string{"/s/0", "/s/1"} {
		for _, p := range paths {
			if code := post(sub, on(p)); code != http.StatusNoContent {
				t.Fatalf("POST %s: %d", sub, code)
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.n != 8 || s.last.Before(s.first) {
		t.Errorf("counted %d records from %v to %v, want 8", s.n, s.first, s.last)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.waitAll(ctx, append(paths, "/redfish/v1/Systems/c")); err == nil || !strings.Contains(err.Error(), "2 (subscription, VM)") {
		t.Errorf("waitAll for a System never started: %v, want 2 missing", err)
	}
	if r := (EventFigures{Delivered: 100, Span: 2 * time.Second}).Rate(); r != 50 {
		t.Errorf("Rate %v, want 50", r)
	}
}
