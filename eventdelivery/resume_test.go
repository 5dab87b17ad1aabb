package eventdelivery

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/eventsub"
)

// TestPatchResumesSuspended: a subscription suspended after its
// retries is delivered to again once a client PATCHes Status.State
// Enabled, with the Context that PATCH set (the delivery starts again on
// the newer generation rather than keeping the sender that gave up).
func TestPatchResumesSuspended(t *testing.T) {
	te := newTestEnv()
	var healthy atomic.Bool
	got := make(chan string, 1000)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var body struct{ Id, Context string }
		_ = json.Unmarshal(raw, &body)
		got <- body.Id + " " + body.Context
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	s := te.subscribe(t, "alice", rc.URL, nil)
	te.start(t, Config{RetryAttempts: 1})
	te.bus.Publish(ev("a1", "team-a", "vm1"))
	awaitState(t, te, s.ID, eventsub.StateDisabled)

	healthy.Store(true)
	enabled, resumed := eventsub.StateEnabled, "resumed"
	if _, err := te.store.Patch(t.Context(), s.ID, eventsub.Patch{State: &enabled, Context: &resumed}); err != nil {
		t.Fatal(err)
	}
	awaitState(t, te, s.ID, eventsub.StateEnabled)
	// The delivery reads the subscriptions from its own watch: publish
	// until it saw the PATCH (each event is one chance, not a window).
	for i := range 100 {
		te.bus.Publish(ev(fmt.Sprint("r", i), "team-a", "vm1"))
		select {
		case g := <-got:
			if !strings.HasSuffix(g, " resumed") {
				t.Fatalf("delivered %q, want the PATCHed Context", g)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("nothing delivered after 100 events published since the subscription was resumed")
}
