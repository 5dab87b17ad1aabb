package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/sim"
)

// requestStateChange appends requests to the VM's status.stateChangeRequests
// the way virt-api's start/stop/restart subresources do (a JSON patch that
// tests the current list).
func (e *env) requestStateChange(t *testing.T, name string, reqs ...map[string]any) {
	t.Helper()
	vm, err := e.getVM(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	cur, found, _ := unstructured.NestedSlice(vm.Object, "status", "stateChangeRequests")
	next := cur
	for _, r := range reqs {
		next = append(next, r)
	}
	ops := []map[string]any{{"op": "add", "path": "/status/stateChangeRequests", "value": next}}
	if found {
		ops = []map[string]any{
			{"op": "test", "path": "/status/stateChangeRequests", "value": cur},
			{"op": "replace", "path": "/status/stateChangeRequests", "value": next},
		}
	}
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.dyn.Resource(sim.VMResource).Namespace(e.ns).Patch(t.Context(), name, types.JSONPatchType, b, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("request %v on VM %s: %v", reqs, name, err)
	}
}

// requestsDrained waits until the VM has no state change request left.
func (e *env) requestsDrained(t *testing.T, name string) {
	t.Helper()
	eventually(t, "state change requests of "+name+" handled", func(ctx context.Context) error {
		vm, err := e.getVM(ctx, name)
		if err != nil {
			return err
		}
		if reqs, _, _ := unstructured.NestedSlice(vm.Object, "status", "stateChangeRequests"); len(reqs) > 0 {
			return fmt.Errorf("still %v", reqs)
		}
		return nil
	})
}

// stays checks for a while that the VM has no VMI.
func (e *env) staysOff(t *testing.T, name string) {
	t.Helper()
	consistently(t, name+" stays off", 500*time.Millisecond, func(ctx context.Context) error {
		if vmi, err := e.getVMI(ctx, name); err == nil {
			return fmt.Errorf("VMI %s exists in phase %q", vmi.GetUID(), str(vmi, "status", "phase"))
		}
		return nil
	})
}

var (
	startReq = map[string]any{"action": "Start"}
	stopReq  = func(uid types.UID) map[string]any { return map[string]any{"action": "Stop", "uid": string(uid)} }
)

// testStateChangeRequests pins the virt-controller behaviour the bridge's
// power verbs rely on: under RerunOnFailure a deleted VMI is NOT replaced;
// a Start request (or a change of run strategy) starts one; Stop+Start
// replaces it; Halted plus Start becomes Always.
func (e *env) testStateChangeRequests(t *testing.T) {
	t.Run("rerun: deleted VMI stays deleted", func(t *testing.T) {
		const name = "scr-deleted"
		e.createVM(t, newVM(e.ns, name, "RerunOnFailure"))
		e.vmiIs(t, name, "Running", "")
		e.deleteVMI(t, name)
		e.vmIs(t, name, "Stopped")
		e.staysOff(t, name)
	})
	t.Run("rerun: start request starts", func(t *testing.T) {
		const name = "scr-start"
		e.createVM(t, newVM(e.ns, name, "RerunOnFailure"))
		first := e.vmiIs(t, name, "Running", "")
		e.deleteVMI(t, name)
		e.vmiGone(t, name)
		e.requestStateChange(t, name, startReq)
		e.vmiIs(t, name, "Running", first.GetUID())
		e.requestsDrained(t, name)
	})
	t.Run("rerun: stop and start restarts", func(t *testing.T) {
		const name = "scr-restart"
		e.createVM(t, newVM(e.ns, name, "RerunOnFailure"))
		first := e.vmiIs(t, name, "Running", "")
		created := e.sim.Counters().VMIsCreated
		e.requestStateChange(t, name, stopReq(first.GetUID()), startReq)
		e.vmiIs(t, name, "Running", first.GetUID())
		e.requestsDrained(t, name)
		if n := e.sim.Counters().VMIsCreated - created; n != 1 {
			t.Errorf("%d VMIs created for one restart, want 1", n)
		}
	})
	t.Run("rerun: strategy change starts", func(t *testing.T) {
		const name = "scr-flip"
		e.createVM(t, newVM(e.ns, name, "RerunOnFailure"))
		e.vmiIs(t, name, "Running", "")
		e.patchVM(t, name, `{"spec":{"runStrategy":"Halted"}}`)
		e.vmiGone(t, name)
		eventually(t, "status.runStrategy Halted", func(ctx context.Context) error {
			vm, err := e.getVM(ctx, name)
			if err != nil {
				return err
			}
			if got := str(vm, "status", "runStrategy"); got != "Halted" {
				return fmt.Errorf("status.runStrategy %q", got)
			}
			return nil
		})
		e.patchVM(t, name, `{"spec":{"runStrategy":"RerunOnFailure"}}`)
		e.vmiIs(t, name, "Running", "")
	})
	t.Run("halted: start request means Always", func(t *testing.T) {
		const name = "scr-halted"
		e.createVM(t, newVM(e.ns, name, "Halted"))
		e.vmIs(t, name, "Stopped")
		e.requestStateChange(t, name, startReq)
		e.vmiIs(t, name, "Running", "")
		vm, err := e.getVM(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		if got := str(vm, "spec", "runStrategy"); got != "Always" {
			t.Errorf("spec.runStrategy %q after a start request on a Halted VM, want Always", got)
		}
	})
	t.Run("manual: only requests act", func(t *testing.T) {
		const name = "scr-manual"
		e.createVM(t, newVM(e.ns, name, "Manual"))
		e.vmIs(t, name, "Stopped")
		e.requestStateChange(t, name, startReq)
		first := e.vmiIs(t, name, "Running", "")
		e.requestsDrained(t, name)
		e.requestStateChange(t, name, stopReq(first.GetUID()))
		e.vmiGone(t, name)
		e.requestsDrained(t, name)
		e.staysOff(t, name)
	})
}
