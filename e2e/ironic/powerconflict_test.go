package ironic

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
)

// softOffThenOn (Ironic 39, the power scenario): a soft power off of a
// guest that ignores ACPI leaves it stopping for its hour's grace; Ironic
// reads PoweringOff as off and returns. The power on that follows is
// refused with 409 ActionParameterValueConflict while the guest stops, and
// Ironic 39 retries it ([redfish]power_on_conflict_retry_interval, 10 s);
// a second operator forces the guest off through Redfish meanwhile, and
// Ironic's next retry is accepted: the node ends powered on, with no
// error, on a new VMI.
func softOffThenOn(t *testing.T, n *node) {
	before := n.waitVMI(t, "VMI Running", running)
	reset := n.key.ID() + "/Actions/ComputerSystem.Reset"
	ons := len(n.rec.matching(http.MethodPost, reset, `"On"`))
	n.power(t, "soft power off", "power off")
	if err := n.s.api.Power(t.Context(), n.uuid, "power on"); err != nil {
		t.Fatalf("power on %s: %v", n.key, err)
	}
	deadline := time.Now().Add(stepTimeout)
	for !hasStatus(n.rec.matching(http.MethodPost, reset, `"On"`)[ons:], http.StatusConflict) {
		if time.Now().After(deadline) {
			t.Fatalf("Ironic's power on was not refused with 409 within %v: %v", stepTimeout, statusesOf(n.rec.matching(http.MethodPost, reset, `"On"`)[ons:]))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if e := n.rec.matching(http.MethodPost, reset, `"On"`)[ons]; !strings.Contains(e.resBody, "ActionParameterValueConflict") {
		t.Errorf("the refused On answered %d %s, want ActionParameterValueConflict", e.status, e.resBody)
	}
	n.forceOff(t)
	got := n.wait(t, "power on, retried", func(x ironicproc.Node) bool { return x.Stable() })
	if ironicproc.Str(got.PowerState) != "power on" || ironicproc.Str(got.LastError) != "" {
		t.Fatalf("after Ironic's retried power on: %s, want power on and no error", got.Summary())
	}
	n.waitVMI(t, "a new VMI Running after the retried power on", func(vmi *unstructured.Unstructured) bool {
		return running(vmi) && vmi.GetUID() != before.GetUID()
	})
	statuses := statusesOf(n.rec.matching(http.MethodPost, reset, `"On"`)[ons:])
	t.Logf("Ironic %s power on during a soft power off of %s: Reset On answered %v", n.s.release.Name, n.key, statuses)
	if statuses[0] != http.StatusConflict || statuses[len(statuses)-1]/100 != 2 {
		t.Errorf("Reset On answered %v, want 409 first and the last accepted", statuses)
	}
}

// forceOff sends ForceOff to n's System through Redfish, as the bridge's
// admin (a second operator).
func (n *node) forceOff(t *testing.T) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n.env.URL+"/redfish/v1/Systems/"+n.key.ID()+"/Actions/ComputerSystem.Reset", strings.NewReader(`{"ResetType":"ForceOff"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(n.env.User, n.env.Password)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the demo bridge's self-signed certificate
	}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("ForceOff %s: %v", n.key, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("ForceOff %s: %d", n.key, resp.StatusCode)
	}
}

func statusesOf(es []exchange) []int {
	out := make([]int, len(es))
	for i, e := range es {
		out[i] = e.status
	}
	return out
}

func hasStatus(es []exchange, status int) bool {
	for _, e := range es {
		if e.status == status {
			return true
		}
	}
	return false
}
