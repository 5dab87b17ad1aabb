package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// sushy58 runs a testdata script with sushy 5.8 and decodes its JSON output.
func sushy58(t *testing.T, env *demo.Env, out any, args ...string) {
	t.Helper()
	runSushyScript(t, sushy58Lib(), env, filepath.Base(args[0]), args[1:], nil, out)
	if t.Failed() {
		t.FailNow()
	}
}

// needSushy58 skips the test when sushy 5.8 is unusable (fails it under
// CI=true).
func needSushy58(t *testing.T) {
	t.Helper()
	requireSushy(t, sushy58Lib())
}

// sushySystem is what testdata/sushy58.py system prints.
type sushySystem struct {
	Sushy         string `json:"sushy"`
	Health        string `json:"health"`
	HealthRollup  string `json:"health_rollup"`
	LastState     string `json:"last_state"`
	LastStateTime string `json:"last_state_time"`
	Boot          []any  `json:"boot"`
}

// ownVM creates a sample VM named name (as its author would) for one test,
// deleted when the test ends, and waits until virt-controller has synced
// it (its own first writes to the VM done, as for a VM that exists before
// a Redfish client comes) and the bridge serves it (its cache answers
// reads).
func (a admin) ownVM(t *testing.T, env *demo.Env, name string) system.Key {
	t.Helper()
	vm := demo.SampleVM(demo.VMNamespace, name)
	res := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(demo.VMNamespace)
	if _, err := res.Create(t.Context(), vm, metav1.CreateOptions{FieldManager: "demo-author"}); err != nil {
		t.Fatalf("create VM %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = res.Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if err := demo.WaitSynced(t.Context(), a.dyn, demo.VMNamespace, name); err != nil {
		t.Fatal(err)
	}
	key := system.Key{Namespace: demo.VMNamespace, Name: name}
	client := redfishClient()
	waitFor(t, "system "+key.ID()+" served", func() (bool, string) {
		status, body := call(t, client, env, http.MethodGet, "/redfish/v1/Systems/"+key.ID(), "")
		return status == http.StatusOK, fmt.Sprintf("%d %s", status, body)
	})
	return key
}

// vmOf reads VM key.
func (a admin) vmOf(t *testing.T, key system.Key) *unstructured.Unstructured {
	t.Helper()
	vm, err := a.dyn.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(t.Context(), key.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get VM %s: %v", key, err)
	}
	return vm
}

// patch merge-patches the object of resource res named like VM key as
// manager; a VMI as virt-handler (KubeVirt's VMI has no status
// subresource: virt-handler patches the object, and virt-api reverts
// status written by anyone else).
func (a admin) patch(t *testing.T, key system.Key, res schema.GroupVersionResource, patch map[string]any, manager string) {
	t.Helper()
	raw, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	client := a.dyn
	if res == kubevirt.VirtualMachineInstances {
		client = a.node
	}
	if _, err := client.Resource(res).Namespace(key.Namespace).Patch(t.Context(), key.Name,
		types.MergePatchType, raw, metav1.PatchOptions{FieldManager: manager}); err != nil {
		t.Fatalf("patch %s %s: %v", res.Resource, key, err)
	}
}

// redfishClient is a plain HTTPS client for the demo's self-signed service.
func redfishClient() *http.Client { return testutil.Insecure() }

// getJSON GETs path and decodes the body, failing the test on anything but 200.
func getJSON(t *testing.T, client *http.Client, env *demo.Env, path string) map[string]any {
	t.Helper()
	status, body := call(t, client, env, http.MethodGet, path, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return out
}

// healthOf is Status.Health, BootProgress.LastState and LastStateTime ("" for null).
func healthOf(sys map[string]any) (health, state, at string) {
	st, _ := sys["Status"].(map[string]any)
	bp, _ := sys["BootProgress"].(map[string]any)
	health, _ = st["Health"].(string)
	state, _ = bp["LastState"].(string)
	at, _ = bp["LastStateTime"].(string)
	return health, state, at
}

// phaseEntered is the VMI's phaseTransitionTimestamps entry for phase.
func phaseEntered(t *testing.T, vmi *unstructured.Unstructured, phase string) string {
	t.Helper()
	entries, _, _ := unstructured.NestedSlice(vmi.Object, "status", "phaseTransitionTimestamps")
	last := ""
	for _, e := range entries {
		if m, ok := e.(map[string]any); ok && m["phase"] == phase {
			last, _ = m["phaseTransitionTimestamp"].(string)
		}
	}
	if last == "" {
		t.Fatalf("VMI %s has no phaseTransitionTimestamps entry for %s: %v", vmi.GetName(), phase, entries)
	}
	return last
}

// TestHealthAndBootProgress walks a VM through the states KubeVirt reports
// (off, booting, guest agent connected, guest crashed, forced off, failed
// image import) and checks the System's Status.Health and BootProgress at
// each, through the wire and through sushy 5.8 as Ironic reads them.
func TestHealthAndBootProgress(t *testing.T) {
	needSushy58(t)
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		client := redfishClient()
		key := a.ownVM(t, env, "health-0")
		path := "/redfish/v1/Systems/" + key.ID()
		want := func(what, health, state, at string) {
			t.Helper()
			waitFor(t, what, func() (bool, string) {
				h, s, when := healthOf(getJSON(t, client, env, path))
				got := fmt.Sprintf("Health %s, LastState %s, LastStateTime %q", h, s, when)
				return h == health && s == state && when == at, got
			})
			var got sushySystem
			sushy58(t, env, &got, "testdata/sushy58.py", "system", key.ID())
			if got.Health != health || got.HealthRollup != health || got.LastState != state {
				t.Errorf("%s: sushy 5.8 (%s) reads health %s/%s, boot progress %s; want %s, %s",
					what, got.Sushy, got.Health, got.HealthRollup, got.LastState, health, state)
			}
			if at != "" {
				if parsed, err := time.Parse(time.RFC3339, got.LastStateTime); err != nil || parsed.Format(time.RFC3339) != at {
					t.Errorf("%s: sushy 5.8 reads LastStateTime %q, want %s", what, got.LastStateTime, at)
				}
			}
		}

		want("off", "OK", "None", "")

		// Its author starts it once: the simulator walks the VMI to Running.
		a.patch(t, key, kubevirt.VirtualMachines, map[string]any{"spec": map[string]any{"runStrategy": "Once"}}, "demo-author")
		var vmi *unstructured.Unstructured
		waitFor(t, "VMI Running", func() (bool, string) {
			vmi = a.vmiOf(t.Context(), t, key)
			return vmi != nil && phase(vmi) == "Running", fmt.Sprint(vmi != nil)
		})
		want("booting", "OK", "OSBootStarted", phaseEntered(t, vmi, "Running"))

		// The guest agent connects: the OS runs.
		agentAt := time.Now().UTC().Add(time.Second).Format(time.RFC3339)
		conds, _, _ := unstructured.NestedSlice(vmi.Object, "status", "conditions")
		conds = append(conds, map[string]any{"type": "AgentConnected", "status": "True", "lastTransitionTime": agentAt})
		a.patch(t, key, kubevirt.VirtualMachineInstances, map[string]any{"status": map[string]any{"conditions": conds}}, "virt-handler")
		want("guest agent connected", "OK", "OSRunning", agentAt)

		// The guest crashes (runStrategy Once: nothing restarts it).
		vmi = a.vmiOf(t.Context(), t, key)
		failedAt := time.Now().UTC().Add(2 * time.Second).Format(time.RFC3339)
		entries, _, _ := unstructured.NestedSlice(vmi.Object, "status", "phaseTransitionTimestamps")
		entries = append(entries, map[string]any{"phase": "Failed", "phaseTransitionTimestamp": failedAt})
		a.patch(t, key, kubevirt.VirtualMachineInstances, map[string]any{"status": map[string]any{
			"phase": "Failed", "phaseTransitionTimestamps": entries,
			"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "GuestCrashed"}},
		}}, "virt-handler")
		want("guest crashed", "Critical", "None", failedAt)

		// Forced off: the failed VMI is gone, nothing is wrong any more.
		if status, body := call(t, client, env, http.MethodPost, path+"/Actions/ComputerSystem.Reset", `{"ResetType":"ForceOff"}`); status/100 != 2 {
			t.Fatalf("ForceOff: %d %s", status, body)
		}
		waitFor(t, "VMI gone", func() (bool, string) { return a.vmiOf(t.Context(), t, key) == nil, "VMI still there" })
		want("forced off", "OK", "None", "")

		// An image that is not there: the import fails.
		media := "/redfish/v1/Managers/" + key.ID() + "/VirtualMedia/cd0"
		if status, body := call(t, client, env, http.MethodPost, media+"/Actions/VirtualMedia.InsertMedia",
			`{"Image":"`+imageURL(env, "no-such.iso")+`"}`); status/100 != 2 {
			t.Fatalf("InsertMedia: %d %s", status, body)
		}
		want("image import failed", "Warning", "None", "")

		if status, body := call(t, client, env, http.MethodPost, media+"/Actions/VirtualMedia.EjectMedia", ""); status/100 != 2 {
			t.Fatalf("EjectMedia: %d %s", status, body)
		}
		want("failed image ejected", "OK", "None", "")
	})
}
