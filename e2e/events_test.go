package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// TestSushyEventSubscription: each sushy library creates, lists and
// deletes a subscription through the EventService (what Ironic's
// create_subscription, get_all_subscriptions and delete_subscription
// call) and submits a test event in between, which the subscription's
// receiver gets with its Context and HttpHeaders; no GET shows the
// headers.
func TestSushyEventSubscription(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		forEachSushy(t, func(t *testing.T, lib sushyLib) {
			type received struct {
				body  map[string]any
				token string
			}
			got := make(chan received, 10)
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				raw, _ := io.ReadAll(r.Body)
				var body map[string]any
				_ = json.Unmarshal(raw, &body)
				got <- received{body, r.Header.Get("X-Receiver-Token")}
				w.WriteHeader(http.StatusNoContent)
			}))
			defer rc.Close()
			start := time.Now()
			var res struct {
				Created        string         `json:"created"`
				Listed         []string       `json:"listed"`
				Read           map[string]any `json:"read"`
				AfterDelete    []string       `json:"after_delete"`
				ServiceEnabled bool           `json:"service_enabled"`
				RetryAttempts  float64        `json:"retry_attempts"`
			}
			runSushyScript(t, lib, env, "sushy_events.py", []string{rc.URL + "/events"}, []string{"RF_AUTH=session"}, &res)
			t.Logf("TIMING sushy %s event subscription create, list, test event, delete: %s", lib.Version, time.Since(start).Round(time.Millisecond))
			uri := "/redfish/v1/EventService/Subscriptions/" + res.Created
			if res.Created == "" || !slices.Contains(res.Listed, uri) || slices.Contains(res.AfterDelete, uri) {
				t.Errorf("created %q, listed %v, after delete %v", res.Created, res.Listed, res.AfterDelete)
			}
			want := map[string]any{"destination": rc.URL + "/events", "context": "e2e-context", "protocol": "Redfish"}
			delete(res.Read, "http_headers") // [] or None by the library: never a value
			if diff := cmp.Diff(want, res.Read); diff != "" {
				t.Errorf("what sushy read (-want +got):\n%s", diff)
			}
			if !res.ServiceEnabled || res.RetryAttempts != 3 {
				t.Errorf("EventService: enabled %v, retry attempts %v", res.ServiceEnabled, res.RetryAttempts)
			}
			select {
			case r := <-got:
				ev := r.body["Events"].([]any)[0].(map[string]any)
				if r.body["Context"] != "e2e-context" || ev["EventId"] != "e2e-test-1" || r.token != "t0ken" {
					t.Errorf("the receiver got %v with token %q", r.body, r.token)
				}
			default:
				t.Error("the receiver got no test event (SubmitTestEvent answers once it was posted)")
			}
		})
	})
}
