package power

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// These tests pin the power verbs against KubeVirt's RerunOnFailure
// semantics (its own virt-controller runs in the test cluster, package sim
// plays the node): a deleted or shut down VMI is not replaced; only a
// Start request, or a change of run strategy, starts a new one.

// testRestarts: GracefulRestart and ForceRestart of a running VM each end
// with a new VMI running, under the bridge's own runStrategy, with every
// state change request handled.
func testRestarts(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "restarts")
	if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	prev := e.eventually(t, key, "on", func(vm *apply.VM) bool { return State(vm) == system.PowerOn })
	for _, kind := range []system.ResetType{system.ResetGracefulRestart, system.ResetForceRestart} {
		if err := e.s.Reset(ctx, key, kind); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		next := e.eventually(t, key, string(kind)+": a new VMI running", func(vm *apply.VM) bool {
			return onWithNewVMI(vm, prev) && len(kubevirt.StateChangeRequestsOf(vm.Object)) == 0
		})
		if rs := runStrategy(next); rs != runOn {
			t.Errorf("%s: runStrategy %s, want %s", kind, rs, runOn)
		}
		prev = next
	}
}

// onThenGuestShutdown creates VM name, powers it on and lets its guest shut
// itself down; it returns the key and the read taken while it was on.
func onThenGuestShutdown(t *testing.T, e *env, name string) (system.Key, *apply.VM) {
	t.Helper()
	ctx := t.Context()
	key := e.createVM(t, name)
	if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	on := e.eventually(t, key, "on", func(vm *apply.VM) bool { return State(vm) == system.PowerOn })
	if err := e.sim.GuestShutdown(ctx, key); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, key, "off after guest shutdown", func(vm *apply.VM) bool { return vm.VMI == nil })
	return key, on
}

// testGuestShutdownThenOn: the guest powers itself off (the VM is Off and
// stays Off under RerunOnFailure); On starts it again.
func testGuestShutdownThenOn(t *testing.T, e *env) {
	ctx := t.Context()
	key, first := onThenGuestShutdown(t, e, "guestoff")
	e.staysOff(t, key)
	if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, key, "on again", func(vm *apply.VM) bool {
		return onWithNewVMI(vm, first)
	})
}

// testOnThenOff: ForceOff right after On ends Off, for good, with
// runStrategy Halted and no request left. Off comes when virt-controller
// has caught up: if it synced the VM between the two writes, it starts a
// VMI and deletes it again once it sees Halted (so a VMI may appear after
// the first moment without one). This does not pin the withdrawal of the
// Start request: virt-controller usually consumes it first (seen: the test
// passes with the withdrawal switched off).
func testOnThenOff(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "onoff")
	for range 3 {
		if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Reset(ctx, key, system.ResetForceOff); err != nil {
			t.Fatal(err)
		}
		vm := e.settlesOff(t, key)
		if rs := runStrategy(vm); rs != runOff {
			t.Fatalf("runStrategy %s after ForceOff, want %s", rs, runOff)
		}
		if reqs := kubevirt.StateChangeRequestsOf(vm.Object); len(reqs) != 0 {
			t.Errorf("state change requests left after ForceOff: %v", reqs)
		}
	}
}

// settlesOff waits (60 s at most) until the VM has had no VMI for a whole
// second and returns it as last read.
func (e *env) settlesOff(t *testing.T, key system.Key) *apply.VM {
	t.Helper()
	var offSince time.Time
	return e.eventually(t, key, "off for a second", func(vm *apply.VM) bool {
		switch {
		case vm.VMI != nil:
			offSince = time.Time{}
		case offSince.IsZero():
			offSince = time.Now()
		}
		return !offSince.IsZero() && time.Since(offSince) >= time.Second
	})
}

// staysOff checks for half a second that the VM has no VMI. A VMI that
// appears is described with its identity and owner, to tell a new one
// (created after the test's last write) from the one that was stopping.
func (e *env) staysOff(t *testing.T, key system.Key) {
	t.Helper()
	testutil.Never(t, key.String()+" stays off", 500*time.Millisecond, 20*time.Millisecond, func(context.Context) error {
		if vm := e.live(t, key); vm.VMI != nil {
			owners, _, _ := unstructured.NestedSlice(vm.VMI.Object, "metadata", "ownerReferences")
			return fmt.Errorf("a VMI in phase %q, want it off: VMI %s uid %s created %s (now %s), deletionTimestamp %v, ownerReferences %v (the VM's uid %s)",
				kubevirt.PhaseOf(vm.VMI), vm.VMI.GetName(), vm.VMI.GetUID(), vm.VMI.GetCreationTimestamp().UTC().Format(time.RFC3339),
				time.Now().UTC().Format(time.RFC3339Nano), vm.VMI.GetDeletionTimestamp(), owners, vm.Object.GetUID())
		}
		return nil
	})
}

// staleVMICache serves the VM live but a VMI frozen at one moment: the
// informer cache a moment after the guest shut down.
type staleVMICache struct {
	e   *env
	vmi *unstructured.Unstructured
}

func (c staleVMICache) VM(key system.Key) (*unstructured.Unstructured, error) {
	return c.e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(context.Background(), key.Name, metav1.GetOptions{})
}

func (c staleVMICache) VMI(system.Key) (*unstructured.Unstructured, error) { return c.vmi, nil }

// testOnWithStaleVMI: the guest shut down, but the cache still shows its
// VMI Running; On must not take that for "already on".
func testOnWithStaleVMI(t *testing.T, e *env) {
	ctx := t.Context()
	key, first := onThenGuestShutdown(t, e, "stale")
	w := apply.New(e.admin, staleVMICache{e: e, vmi: first.VMI}, e.w.Mode(), apply.Options{})
	if err := New(w, e.admin, nil).Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, key, "on again despite the stale cache", func(vm *apply.VM) bool {
		return onWithNewVMI(vm, first)
	})
}
