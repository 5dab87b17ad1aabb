package apply

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

func TestStateChange(t *testing.T) {
	forEachVariant(t, func(t *testing.T, c *testcluster.Cluster) {
		t.Run("ownership and a concurrent request", func(t *testing.T) { testStateChange(t, newEnv(t, c)) })
	})
}

func appendReq(add ...kubevirt.StateChangeRequest) StateChangeFunc {
	return func(_ *VM, reqs *[]kubevirt.StateChangeRequest) error {
		*reqs = append(*reqs, add...)
		return nil
	}
}

// testStateChange: a Start request lands in status under redfish-power (and
// nothing in spec changes); a request written by another writer (virt-api's
// JSON patch) after the bridge's read is kept: the stale apply gets 409 and
// the retry appends to it; taking the list over from that Update manager
// needs the force the builder sets; the spec is untouched throughout.
func testStateChange(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "scr")
	before := e.get(t, key)
	w := New(e.bridge, nil, e.mode, Options{})
	vm, err := w.StateChange(ctx, key, appendReq(kubevirt.StateChangeRequest{Action: kubevirt.StartRequest}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]kubevirt.StateChangeRequest{{Action: kubevirt.StartRequest}}, kubevirt.StateChangeRequestsOf(vm.Object)); diff != "" {
		t.Errorf("requests after Start (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{".status.stateChangeRequests"}, e.ownedBy(t, key, ManagerPower)); diff != "" {
		t.Errorf("redfish-power owns (-want +got):\n%s", diff)
	}
	if vm.Object.GetGeneration() != before.GetGeneration() {
		t.Errorf("a status apply bumped the generation %d -> %d", before.GetGeneration(), vm.Object.GetGeneration())
	}

	// virt-api (an Update manager) replaces the list after our read.
	stale := e.get(t, key)
	patch, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": "/status/stateChangeRequests", "value": []any{map[string]any{"action": "Start"}}},
		{"op": "replace", "path": "/status/stateChangeRequests", "value": []any{map[string]any{"action": "Stop", "uid": "u-1"}}},
	})
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Patch(ctx, key.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: "virt-api"}, "status"); err != nil {
		t.Fatal(err)
	}
	sw := New(e.bridge, staleCache{stale}, e.mode, Options{})
	vm, err = sw.StateChange(ctx, key, appendReq(kubevirt.StateChangeRequest{Action: kubevirt.StartRequest}))
	if err != nil {
		t.Fatal(err)
	}
	want := []kubevirt.StateChangeRequest{{Action: kubevirt.StopRequest, UID: "u-1"}, {Action: kubevirt.StartRequest}}
	if diff := cmp.Diff(want, kubevirt.StateChangeRequestsOf(vm.Object)); diff != "" {
		t.Errorf("requests after a concurrent Stop (-want +got):\n%s", diff)
	}
	if got := sw.Stats()[ManagerPower]; got.Conflicts != 1 || got.Applies != 1 {
		t.Errorf("stale read: counters %+v, want one conflict then one apply", got)
	}
	if diff := cmp.Diff([]string{".status.stateChangeRequests"}, e.ownedBy(t, key, ManagerPower)); diff != "" {
		t.Errorf("redfish-power owns after the takeover (-want +got):\n%s", diff)
	}
	// Withdrawing everything leaves an empty list, still ours.
	vm, err = w.StateChange(ctx, key, func(_ *VM, reqs *[]kubevirt.StateChangeRequest) error { *reqs = nil; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if reqs := kubevirt.StateChangeRequestsOf(vm.Object); len(reqs) != 0 {
		t.Errorf("requests after withdrawing all: %v", reqs)
	}
	if _, err := w.StateChange(ctx, key, func(*VM, *[]kubevirt.StateChangeRequest) error { return ErrNoChange }); err != nil {
		t.Errorf("no change: %v", err)
	}
}
