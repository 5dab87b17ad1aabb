package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/media"
)

func TestCollect(t *testing.T) {
	m := New()
	dur := controller.Histogram{Count: 3, Sum: 0.5, Buckets: map[float64]uint64{0.1: 2, 1: 3}}
	ctrls := []controller.Stats{
		{Name: "media", Running: true, Depth: 2, Adds: 7, Successes: 4, Requeues: 1, Errors: 2, Retries: 2, Duration: dur},
		{Name: "power", Running: true, Depth: 0, Adds: 1, Successes: 1},
		{Name: "idle", Adds: 3, Successes: 3}, // between terms: no queue depth
	}
	m.Watch(Sources{
		Applies: func() map[string]apply.Counters {
			return map[string]apply.Counters{apply.ManagerMedia: {Applies: 3, Conflicts: 1, Retries: 1}}
		},
		Media:       func() media.Stats { return media.Stats{PodsCreated: 2, ImportsReady: 1, ImportsFailed: 1} },
		Controllers: func() []controller.Stats { return ctrls },
		RebootPolicyFallbacks: func() map[string]int64 {
			return map[string]int64{apply.FallbackRefused: 2, apply.FallbackAuthor: 0}
		},
	})
	m.ObserveRequest("GET", "/redfish/v1/Systems/:id", 200, 3*time.Millisecond)
	m.ObserveRequest("GET", "/redfish/v1/Systems/:id", 200, 5*time.Millisecond)
	m.ObserveRequest("GET", "", 404, time.Millisecond)
	m.ObserveRequest("XYZZY", "/redfish/v1/Systems/:id", 405, time.Millisecond)
	m.ObserveRequest("get", "", 404, time.Millisecond)
	m.ObserveImport("succeeded", 3*time.Second)
	m.SetLeader(true)

	want := `
# HELP redfish_bridge_applies_total Server-side applies of VirtualMachines by field manager and outcome: applied, conflict (409, retried), retry, failed, refused (the decision wrote nothing, by choice).
# TYPE redfish_bridge_applies_total counter
redfish_bridge_applies_total{manager="redfish-media",outcome="applied"} 3
redfish_bridge_applies_total{manager="redfish-media",outcome="conflict"} 1
redfish_bridge_applies_total{manager="redfish-media",outcome="failed"} 0
redfish_bridge_applies_total{manager="redfish-media",outcome="refused"} 0
redfish_bridge_applies_total{manager="redfish-media",outcome="retry"} 1
# HELP redfish_bridge_http_requests_total Redfish requests by method, route template and status code.
# TYPE redfish_bridge_http_requests_total counter
redfish_bridge_http_requests_total{code="200",method="GET",route="/redfish/v1/Systems/:id"} 2
redfish_bridge_http_requests_total{code="404",method="GET",route="unmatched"} 1
redfish_bridge_http_requests_total{code="404",method="other",route="unmatched"} 1
redfish_bridge_http_requests_total{code="405",method="other",route="/redfish/v1/Systems/:id"} 1
# HELP redfish_bridge_leader 1 while this replica holds the Lease and runs the reconcilers.
# TYPE redfish_bridge_leader gauge
redfish_bridge_leader 1
# HELP redfish_bridge_media_imports_total ISO imports by event: started (pod created), succeeded, failed, timed_out.
# TYPE redfish_bridge_media_imports_total counter
redfish_bridge_media_imports_total{event="failed"} 1
redfish_bridge_media_imports_total{event="started"} 2
redfish_bridge_media_imports_total{event="succeeded"} 1
redfish_bridge_media_imports_total{event="timed_out"} 0
# HELP redfish_bridge_reboot_policy_fallbacks_total Once boot overrides armed without rebootPolicy Terminate (a reboot the guest does itself boots the override's target again), by reason: RebootPolicyRefused (the cluster refused the field: KubeVirt's RebootPolicy feature gate is off), RebootPolicyAuthorOwned (the VM's author set another value).
# TYPE redfish_bridge_reboot_policy_fallbacks_total counter
redfish_bridge_reboot_policy_fallbacks_total{reason="RebootPolicyAuthorOwned"} 0
redfish_bridge_reboot_policy_fallbacks_total{reason="RebootPolicyRefused"} 2
# HELP redfish_bridge_reconciler_queue_depth VMs waiting in a reconciler's queue.
# TYPE redfish_bridge_reconciler_queue_depth gauge
redfish_bridge_reconciler_queue_depth{reconciler="media"} 2
redfish_bridge_reconciler_queue_depth{reconciler="power"} 0
# HELP redfish_bridge_controller_reconciles_total Reconcile passes by result: success, requeue_after (asked to look again later), error (requeued with backoff).
# TYPE redfish_bridge_controller_reconciles_total counter
redfish_bridge_controller_reconciles_total{controller="idle",result="error"} 0
redfish_bridge_controller_reconciles_total{controller="idle",result="requeue_after"} 0
redfish_bridge_controller_reconciles_total{controller="idle",result="success"} 3
redfish_bridge_controller_reconciles_total{controller="media",result="error"} 2
redfish_bridge_controller_reconciles_total{controller="media",result="requeue_after"} 1
redfish_bridge_controller_reconciles_total{controller="media",result="success"} 4
redfish_bridge_controller_reconciles_total{controller="power",result="error"} 0
redfish_bridge_controller_reconciles_total{controller="power",result="requeue_after"} 0
redfish_bridge_controller_reconciles_total{controller="power",result="success"} 1
# HELP redfish_bridge_controller_retries_total Rate-limited requeues after a failed pass.
# TYPE redfish_bridge_controller_retries_total counter
redfish_bridge_controller_retries_total{controller="idle"} 0
redfish_bridge_controller_retries_total{controller="media"} 2
redfish_bridge_controller_retries_total{controller="power"} 0
`
	names := []string{"redfish_bridge_applies_total", "redfish_bridge_http_requests_total", "redfish_bridge_leader",
		"redfish_bridge_media_imports_total", "redfish_bridge_reboot_policy_fallbacks_total", "redfish_bridge_reconciler_queue_depth",
		"redfish_bridge_controller_reconciles_total", "redfish_bridge_controller_retries_total"}
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.latency); n != 4 {
		t.Errorf("latency series = %d, want 4 (one per method+route)", n)
	}
	adds, err := testutil.GatherAndCount(m.Registry, "redfish_bridge_controller_adds_total", "redfish_bridge_controller_reconcile_duration_seconds")
	if err != nil || adds != 6 {
		t.Errorf("controller adds and duration series = %d (%v), want 6 (3 controllers)", adds, err)
	}
	if n := testutil.CollectAndCount(m.importDuration); n != 1 {
		t.Errorf("import duration series = %d, want 1", n)
	}
}

func TestHandler(t *testing.T) {
	var readyErr error
	srv := httptest.NewServer(New().Handler(func() error { return readyErr }))
	t.Cleanup(srv.Close)
	get := func(path string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	type result struct {
		Code int
		Body string
	}
	for _, tc := range []struct {
		name, path string
		ready      error
		want       result
	}{
		{"healthz", "/healthz", nil, result{200, "ok\n"}},
		{"healthz while not ready", "/healthz", errors.New("caches not synced"), result{200, "ok\n"}},
		{"readyz", "/readyz", nil, result{200, "ok\n"}},
		{"readyz not ready", "/readyz", errors.New("caches not synced"), result{503, "not ready: caches not synced\n"}},
		{"unknown", "/nope", nil, result{404, "404 page not found\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			readyErr = tc.ready
			code, body := get(tc.path)
			if diff := cmp.Diff(tc.want, result{code, body}); diff != "" {
				t.Errorf("GET %s (-want +got):\n%s", tc.path, diff)
			}
		})
	}
	t.Run("metrics", func(t *testing.T) {
		code, body := get("/metrics")
		if code != 200 || !strings.Contains(body, "go_goroutines") || !strings.Contains(body, "redfish_bridge_leader 0") {
			t.Errorf("GET /metrics: %d\n%s", code, body)
		}
	})
}
