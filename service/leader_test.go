package service_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/fields"
	"github.com/redfish-bridge/redfish-bridge/service"
)

// TestLeaderFailover runs two replicas against one cluster: both serve
// Redfish, exactly one runs the reconcilers. The leader is stopped while
// the ISO import it started is in flight; the other replica takes the
// Lease, follows the same import pod to completion and performs the
// deferred power-on. A metrics scrape then shows the cycle.
func TestLeaderFailover(t *testing.T) {
	for _, v := range []crds.Variant{crds.Stock, crds.MapList} {
		t.Run(string(v), func(t *testing.T) { testLeaderFailover(t, v) })
	}
}

func testLeaderFailover(t *testing.T, v crds.Variant) {
	e := newEnv(t, v)
	a := e.start(t, "replica-a")
	eventually(t, "replica-a to lead", a.Leading)
	b := e.start(t, "replica-b")
	// b keeps campaigning (every retry period) while a renews: it must
	// never lead. Checked at each of a's next 5 renewals of the Lease (b
	// tried in each retry period between them), not for a window of time.
	aRenews(t, e, 5, func() {
		if !a.Leading() || b.Leading() {
			t.Fatalf("leading: a=%v b=%v, want a only", a.Leading(), b.Leading())
		}
	})

	// Ironic's sequence, sent to the replica that does NOT lead.
	sys := e.ns + ".vm-0"
	statuses := map[string][]int{}
	send := func(method, route, path string, body any) {
		t.Helper()
		code, resp := e.call(t, b, method, path, body)
		if code >= 300 {
			t.Fatalf("%s %s: %d %v", method, path, code, resp)
		}
		statuses[method+" "+route] = append(statuses[method+" "+route], code)
	}
	send(http.MethodPost, "/redfish/v1/Managers/:id/VirtualMedia/:slot/Actions/VirtualMedia.InsertMedia",
		"/redfish/v1/Managers/"+sys+"/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": e.image.url()})
	send(http.MethodPatch, "/redfish/v1/Systems/:id", "/redfish/v1/Systems/"+sys,
		map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}})
	send(http.MethodPost, "/redfish/v1/Systems/:id/Actions/ComputerSystem.Reset",
		"/redfish/v1/Systems/"+sys+"/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "On"})

	eventually(t, "the leader's import pod to start", func() bool { return e.sim.Counters().ImportsStarted == 1 })
	if got := a.MediaStats().PodsCreated; got != 1 {
		t.Fatalf("leader created %d import pods, want 1", got)
	}
	if c := e.sim.Counters(); c.VMIsStarted != 0 {
		t.Fatalf("VM started before its import finished: %+v", c)
	}

	a.stop() // mid-import
	if a.Leading() {
		t.Fatal("stopped replica still leads")
	}
	eventually(t, "replica-b to take the lease", b.Leading)
	e.image.open()

	// The simulator counts a start once its Running status is written, so
	// the bridge can report On a moment before the count moves: wait for
	// both, then check the counts are exact.
	eventually(t, "the import to finish and the VM to power on", func() bool {
		_, vm := e.call(t, b, http.MethodGet, "/redfish/v1/Systems/"+sys, nil)
		_, cd := e.call(t, b, http.MethodGet, "/redfish/v1/Managers/"+sys+"/VirtualMedia/cd0", nil)
		return vm["PowerState"] == "On" && cd["Inserted"] == true && e.sim.Counters().VMIsStarted > 0
	})
	c := e.sim.Counters()
	type outcome struct {
		SimImportsStarted, PodsCreatedA, PodsCreatedB, ImportsReadyB int64
		VMIsStarted                                                  int64
		Corruptions                                                  int
	}
	got := outcome{c.ImportsStarted, a.MediaStats().PodsCreated, b.MediaStats().PodsCreated, b.MediaStats().ImportsReady,
		c.VMIsStarted, len(e.sim.Corruptions())}
	want := outcome{SimImportsStarted: 1, PodsCreatedA: 1, PodsCreatedB: 0, ImportsReadyB: 1, VMIsStarted: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after failover (-want +got):\n%s", diff)
	}

	// The real cycle left ownership exactly as the table says.
	report, err := fields.Load(t.Context(), e.admin, e.ns, "vm-0", "auto")
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Deviations) != 0 {
		t.Errorf("ownership deviations after the cycle: %+v", report.Deviations)
	}
	if path := os.Getenv("FIELDS_EXAMPLE"); path != "" { // regenerates docs/fields-example*.txt
		var b bytes.Buffer
		if err := fields.WriteText(&b, report); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.ReplaceAll(path, "VARIANT", string(v)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The new leader's scrape.
	fams := scrape(t, b.MetricsAddr)
	for key, codes := range statuses {
		var method, route string
		if _, err := fmt.Sscanf(key, "%s %s", &method, &route); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{"method": method, "route": route, "code": fmt.Sprint(codes[0])}
		if got := value(fams, "redfish_bridge_http_requests_total", labels); got != float64(len(codes)) {
			t.Errorf("requests %v = %v, want %d", labels, got, len(codes))
		}
	}
	for _, m := range []string{apply.ManagerMedia, apply.ManagerBoot, apply.ManagerPower} {
		if got := value(fams, "redfish_bridge_applies_total", map[string]string{"manager": m, "outcome": "applied"}); got < 1 {
			t.Errorf("applies by %s = %v, want >= 1", m, got)
		}
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"redfish_bridge_media_imports_total", map[string]string{"event": "succeeded"}, 1},
		{"redfish_bridge_media_imports_total", map[string]string{"event": "started"}, 0}, // a created the pod
		{"redfish_bridge_leader", nil, 1},
	} {
		if got := value(fams, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if h := find(fams, "redfish_bridge_media_import_duration_seconds", map[string]string{"result": "succeeded"}); h == nil || h.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("import duration histogram: %v", h)
	}

	t.Run("events", func(t *testing.T) { testEvents(t, e, b) })
}

func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// find returns the series of family name carrying all labels.
func find(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		match := 0
		for _, l := range m.GetLabel() {
			if want, ok := labels[l.GetName()]; ok && want == l.GetValue() {
				match++
			}
		}
		if match == len(labels) {
			return m
		}
	}
	return nil
}

// value is a counter's or gauge's value; -1 when the series is missing.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m := find(fams, name, labels)
	switch {
	case m == nil:
		return -1
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	default:
		return m.GetGauge().GetValue()
	}
}

// aRenews watches the bridge's Lease until replica-a has renewed it n
// times, calling check at each renewal; any other holder fails the test.
func aRenews(t *testing.T, e *env, n int, check func()) {
	t.Helper()
	leases := kubernetes.NewForConfigOrDie(e.c.Admin).CoordinationV1().Leases(e.c.BridgeNamespace)
	w, err := leases.Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + service.DefaultLeaseName})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	deadline := time.After(waitTimeout)
	for renewals := 0; renewals < n; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the Lease watch ended")
			}
			l, isLease := ev.Object.(*coordinationv1.Lease)
			if !isLease {
				continue
			}
			if h := l.Spec.HolderIdentity; h == nil || *h != "replica-a" {
				t.Fatalf("the Lease is held by %v, want replica-a", h)
			}
			if ev.Type == watch.Modified {
				renewals++
			}
			check()
		case <-deadline:
			t.Fatalf("replica-a renewed the Lease %d times in %s, want %d", renewals, waitTimeout, n)
		}
	}
}
