package power

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/internal/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
	"github.com/redfish-bridge/redfish-bridge/testcluster"
)

// A guest that ignores ACPI: its VM asks for an hour's grace, and the
// simulator (playing virt-handler) keeps a stopping guest running for
// ten minutes unless the VMI's grace period is shorter.
const (
	hungGuestGrace = int64(3600)
	hungGuestStop  = 10 * time.Minute
	// forceWait is how long a forced verb may take to end the guest: far
	// under hungGuestStop, far over what it takes (about a second).
	forceWait = 30 * time.Second
	// holdWait is how long an unforced stop must leave the guest running
	// for the tests to tell it from a forced one (which takes about a
	// second): far under hungGuestStop.
	holdWait = 10 * time.Second
)

// TestForce: on a cluster with virt-api (its subresource API registered),
// ForceOff and ForceRestart end a guest that ignores ACPI at once through
// virt-api's stop and restart, while GracefulShutdown leaves it its grace
// period. The negative control switches the subresource call off (a
// Service without a Forcer): ForceOff then does not end the guest within
// forceWait. Both CRD variants.
func TestForce(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			c := testcluster.SharedVirtAPI(t, v)
			opts := envOptions{virtAPI: true, stopDelay: hungGuestStop}
			t.Run("ForceOff ends the guest", func(t *testing.T) { testForceOff(t, startEnvWith(t, c, opts)) })
			t.Run("ForceRestart replaces the guest", func(t *testing.T) { testForceRestart(t, startEnvWith(t, c, opts)) })
			t.Run("ForceRestart with a request pending", func(t *testing.T) { testForceRestartPending(t, startEnvWith(t, c, opts)) })
			t.Run("GracefulShutdown honours the grace period, ForceOff cuts it", func(t *testing.T) {
				testGracefulThenForce(t, startEnvWith(t, c, opts))
			})
			t.Run("control: ForceOff without virt-api's stop", func(t *testing.T) {
				o := opts
				o.noForce = true
				testForceOffControl(t, startEnvWith(t, c, o))
			})
		})
	}
}

// hungGuestOn creates VM name whose template asks for hungGuestGrace,
// powers it on and returns its read once on.
func hungGuestOn(t *testing.T, e *env, name string) (system.Key, *apply.VM) {
	t.Helper()
	ctx := t.Context()
	u := testutil.VM(e.ns, name, "Halted")
	if err := unstructured.SetNestedField(u.Object, hungGuestGrace, "spec", "template", "spec", "terminationGracePeriodSeconds"); err != nil {
		t.Fatal(err)
	}
	key := e.createVMFrom(t, u)
	if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	on := e.eventually(t, key, "on", func(vm *apply.VM) bool { return State(vm) == system.PowerOn })
	if g, _ := kubevirt.VMIGracePeriodOf(on.VMI); g != hungGuestGrace {
		t.Fatalf("VMI terminationGracePeriodSeconds %d, want %d from the template", g, hungGuestGrace)
	}
	return key, on
}

// within polls cond on live reads for at most d; it returns the last
// read and whether cond held.
func (e *env) within(t *testing.T, key system.Key, d time.Duration, cond func(vm *apply.VM) bool) (*apply.VM, bool) {
	t.Helper()
	var last *apply.VM
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, d, true, func(context.Context) (bool, error) {
		last = e.live(t, key)
		return cond(last), nil
	})
	if err != nil && !wait.Interrupted(err) {
		t.Fatal(err)
	}
	return last, err == nil
}

func vmiGone(vm *apply.VM) bool { return vm.VMI == nil }

func describeVMI(vm *apply.VM) string {
	if vm.VMI == nil {
		return "no VMI"
	}
	g, _ := kubevirt.VMIGracePeriodOf(vm.VMI)
	return fmt.Sprintf("VMI uid %s phase %s grace %d deletionTimestamp %v", vm.VMI.GetUID(), kubevirt.PhaseOf(vm.VMI), g, vm.VMI.GetDeletionTimestamp())
}

// testForceOff: ForceOff of the hung guest leaves the system Off, its VMI
// gone, within forceWait, and it stays off.
func testForceOff(t *testing.T, e *env) {
	key, _ := hungGuestOn(t, e, "forceoff")
	if err := e.s.Reset(t.Context(), key, system.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	if last, ok := e.within(t, key, forceWait, vmiGone); !ok {
		t.Fatalf("ForceOff: after %s %s, want it gone", forceWait, describeVMI(last))
	}
	if st := State(e.live(t, key)); st != system.PowerOff {
		t.Errorf("after ForceOff: %s, want Off", st)
	}
	e.staysOff(t, key)
}

// testForceRestart: ForceRestart of the hung guest gives a new VMI running
// within forceWait, with the template's grace period again.
func testForceRestart(t *testing.T, e *env) {
	key, first := hungGuestOn(t, e, "forcerestart")
	if err := e.s.Reset(t.Context(), key, system.ResetForceRestart); err != nil {
		t.Fatal(err)
	}
	next, ok := e.within(t, key, forceWait, func(vm *apply.VM) bool {
		return onWithNewVMI(vm, first)
	})
	if !ok {
		t.Fatalf("ForceRestart: after %s %s, want a new VMI running (the old was %s)", forceWait, describeVMI(next), first.VMI.GetUID())
	}
	if g, _ := kubevirt.VMIGracePeriodOf(next.VMI); g != hungGuestGrace {
		t.Errorf("new VMI's grace %d, want the template's %d", g, hungGuestGrace)
	}
	if rs := runStrategy(next); rs != runOn {
		t.Errorf("runStrategy %s after ForceRestart, want %s", rs, runOn)
	}
}

// testForceRestartPending: a ForceRestart that sees a request pending (a
// cache still showing the Start of the On before: virt-api's restart
// would refuse) goes through virt-api's stop and the bridge's own Start,
// and still gives a new VMI within forceWait.
func testForceRestartPending(t *testing.T, e *env) {
	ctx := t.Context()
	key, first := hungGuestOn(t, e, "forcepending")
	stale := e.live(t, key)
	stale.Object = stale.Object.DeepCopy()
	if err := unstructured.SetNestedSlice(stale.Object.Object, []any{map[string]any{"action": string(kubevirt.StartRequest)}}, kubevirt.StateChangeRequests...); err != nil {
		t.Fatal(err)
	}
	add, err := e.s.forceRestart(ctx, stale)
	if err != nil {
		t.Fatal(err)
	}
	if len(add) != 1 || add[0].Action != kubevirt.StartRequest {
		t.Fatalf("after virt-api's stop the bridge adds %v, want one Start", add)
	}
	if err := e.s.request(ctx, key, add...); err != nil {
		t.Fatal(err)
	}
	next, ok := e.within(t, key, forceWait, func(vm *apply.VM) bool {
		return onWithNewVMI(vm, first)
	})
	if !ok {
		t.Fatalf("ForceRestart with a request pending: after %s %s, want a new VMI running (the old was %s)", forceWait, describeVMI(next), first.VMI.GetUID())
	}
}

// testGracefulThenForce: GracefulShutdown leaves the hung guest running
// (PoweringOff, the VMI's grace untouched) for holdWait; a ForceOff then
// ends it.
func testGracefulThenForce(t *testing.T, e *env) {
	ctx := t.Context()
	key, _ := hungGuestOn(t, e, "graceful")
	if err := e.s.Reset(ctx, key, system.ResetGracefulShutdown); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, key, "powering off", func(vm *apply.VM) bool { return State(vm) == system.PowerPoweringOff })
	if last, ended := e.within(t, key, holdWait, func(vm *apply.VM) bool { return State(vm) != system.PowerPoweringOff }); ended {
		t.Fatalf("GracefulShutdown: %s (%s) within %s, want PoweringOff for the guest's grace period", State(last), describeVMI(last), holdWait)
	}
	if g, _ := kubevirt.VMIGracePeriodOf(e.live(t, key).VMI); g != hungGuestGrace {
		t.Errorf("GracefulShutdown changed the VMI's grace to %d", g)
	}
	if err := e.s.Reset(ctx, key, system.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	if last, ok := e.within(t, key, forceWait, vmiGone); !ok {
		t.Fatalf("ForceOff during the graceful shutdown: after %s %s, want it gone", forceWait, describeVMI(last))
	}
}

// testForceOffControl: without the subresource call ForceOff is only
// runStrategy Halted: the hung guest is still there after holdWait.
func testForceOffControl(t *testing.T, e *env) {
	key, _ := hungGuestOn(t, e, "control")
	if err := e.s.Reset(t.Context(), key, system.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	if last, gone := e.within(t, key, holdWait, vmiGone); gone {
		t.Fatalf("control: the VMI went within %s without virt-api's stop (%s): the test cannot tell a forced stop from a graceful one", holdWait, describeVMI(last))
	}
}
