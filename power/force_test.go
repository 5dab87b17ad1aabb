package power

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// A guest that ignores ACPI: its VM asks for an hour's grace, and the
// simulator (playing virt-handler) never sees it shut itself down, so a
// stopping guest runs until that grace period has passed. Nothing in these
// tests waits a window of time for a guest to stay up or to go: a forced
// verb shows in the VMI at once (virt-api cuts its grace period before it
// answers), and a graceful stop is known to be under way when the
// simulator holds the guest's launcher pod for it (sim.LauncherHeld); from
// then on only a forced stop could end the guest within the hour.
const (
	hungGuestGrace = int64(3600)
	hungGuestStop  = 24 * time.Hour
	// forceDeadline bounds the wait for a forced stop to end the guest:
	// about a second on a quiet machine, over 30 s seen for a restart on a
	// loaded one. It is no window the test measures: the force is
	// checked on the VMI first, and an unforced guest would take the hour.
	forceDeadline = 5 * time.Minute
)

// TestForce: on a cluster with virt-api (its subresource API registered),
// ForceOff and ForceRestart end a guest that ignores ACPI at once through
// virt-api's stop and restart, while GracefulShutdown leaves it its grace
// period. The negative control switches the subresource call off (a
// Service without a Forcer): ForceOff then leaves the guest in its graceful
// stop, with its hour's grace, once the simulator holds it there. Both CRD
// variants.
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
			t.Run("On conflicts during a graceful shutdown, then is accepted after ForceOff", func(t *testing.T) {
				testOnWhileStopping(t, startEnvWith(t, c, opts))
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
	// The verbs decide on the bridge's reads (its informer cache, which a
	// loaded machine leaves behind the live read above): hand the guest
	// over once they show its VMI, as createVMFrom does for the VM.
	testutil.Eventually(t, "the bridge's reads show the VMI", 60*time.Second, 20*time.Millisecond, func(ctx context.Context) error {
		vm, err := e.w.Read(ctx, key)
		if err != nil {
			return err
		}
		if vm.VMI == nil || vm.VMI.GetUID() != on.VMI.GetUID() {
			return fmt.Errorf("%s, want VMI uid %s", describeVMI(vm), on.VMI.GetUID())
		}
		return nil
	})
	return key, on
}

func vmiGone(vm *apply.VM) bool { return vm.VMI == nil }

func describeVMI(vm *apply.VM) string {
	if vm.VMI == nil {
		return "no VMI"
	}
	g, _ := kubevirt.VMIGracePeriodOf(vm.VMI)
	return fmt.Sprintf("VMI uid %s phase %s grace %d deletionTimestamp %v", vm.VMI.GetUID(), kubevirt.PhaseOf(vm.VMI), g, vm.VMI.GetDeletionTimestamp())
}

// forced checks, right after a forced verb returned, that virt-api's
// forced stop reached the VMI with uid: it is gone or replaced already,
// or its grace period is cut to 0 (virt-api's stop) or 1 (its restart),
// which virt-api patches before it answers. Without the force the VMI
// still has the hung guest's hour.
func (e *env) forced(t *testing.T, key system.Key, uid types.UID, verb string) {
	t.Helper()
	vm := e.live(t, key)
	if vm.VMI == nil || vm.VMI.GetUID() != uid {
		return
	}
	if g, _ := kubevirt.VMIGracePeriodOf(vm.VMI); g > 1 {
		t.Fatalf("%s returned and the guest's %s: want virt-api's forced stop (grace period cut to 0 or 1)", verb, describeVMI(vm))
	}
}

// stopHeld waits until the graceful stop of the hung guest's VMI uid is
// under way (virt-controller deleted the VMI and its launcher pod; the
// simulator, as the kubelet and virt-launcher, holds the pod for the
// guest's stop) and checks that the guest is still there, with its grace
// period untouched: from then on only a forced stop could end it within
// the hour. It also stops waiting when that VMI is gone or final, which
// fails: the guest ended without a force.
func (e *env) stopHeld(t *testing.T, key system.Key, uid types.UID, what string) *apply.VM {
	t.Helper()
	var last *apply.VM
	testutil.Eventually(t, what+": the guest's graceful stop under way", 60*time.Second, 20*time.Millisecond, func(context.Context) error {
		held := e.sim.LauncherHeld(uid)
		if last = e.live(t, key); held || last.VMI == nil || last.VMI.GetUID() != uid || kubevirt.Final(last.VMI) {
			return nil
		}
		return fmt.Errorf("%s, runStrategy %s", describeVMI(last), runStrategy(last))
	})
	if last.VMI == nil || last.VMI.GetUID() != uid || kubevirt.Final(last.VMI) {
		t.Fatalf("%s: the guest (VMI %s) ended without virt-api's forced stop (now %s): want it in its graceful stop for %d s", what, uid, describeVMI(last), hungGuestGrace)
	}
	if g, _ := kubevirt.VMIGracePeriodOf(last.VMI); g != hungGuestGrace {
		t.Fatalf("%s: %s, want the guest's grace period %d untouched", what, describeVMI(last), hungGuestGrace)
	}
	return last
}

// testForceOff: ForceOff of the hung guest cuts its grace period, then
// leaves the system Off, its VMI gone, and it stays off.
func testForceOff(t *testing.T, e *env) {
	key, on := hungGuestOn(t, e, "forceoff")
	if err := e.s.Reset(t.Context(), key, system.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	e.forced(t, key, on.VMI.GetUID(), "ForceOff")
	e.eventuallyFor(t, key, "ForceOff: VMI gone", forceDeadline, vmiGone)
	if st := State(e.live(t, key)); st != system.PowerOff {
		t.Errorf("after ForceOff: %s, want Off", st)
	}
	e.staysOff(t, key)
}

// testForceRestart: ForceRestart of the hung guest cuts its grace period
// and gives a new VMI running, with the template's grace period again.
func testForceRestart(t *testing.T, e *env) {
	key, first := hungGuestOn(t, e, "forcerestart")
	if err := e.s.Reset(t.Context(), key, system.ResetForceRestart); err != nil {
		t.Fatal(err)
	}
	e.forced(t, key, first.VMI.GetUID(), "ForceRestart")
	next := e.eventuallyFor(t, key, "ForceRestart: a new VMI running (the old was "+string(first.VMI.GetUID())+")", forceDeadline, func(vm *apply.VM) bool {
		return onWithNewVMI(vm, first)
	})
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
// and still gives a new VMI.
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
	e.forced(t, key, first.VMI.GetUID(), "ForceRestart with a request pending")
	if err := e.s.request(ctx, key, add...); err != nil {
		t.Fatal(err)
	}
	e.eventuallyFor(t, key, "ForceRestart with a request pending: a new VMI running (the old was "+string(first.VMI.GetUID())+")", forceDeadline, func(vm *apply.VM) bool {
		return onWithNewVMI(vm, first)
	})
}

// testGracefulThenForce: GracefulShutdown leaves the hung guest in its
// graceful stop (PoweringOff, the VMI's grace untouched) once that stop is
// under way; a ForceOff then cuts the grace period and ends it.
func testGracefulThenForce(t *testing.T, e *env) {
	ctx := t.Context()
	key, on := hungGuestOn(t, e, "graceful")
	if err := e.s.Reset(ctx, key, system.ResetGracefulShutdown); err != nil {
		t.Fatal(err)
	}
	if vm := e.stopHeld(t, key, on.VMI.GetUID(), "GracefulShutdown"); State(vm) != system.PowerPoweringOff {
		t.Errorf("GracefulShutdown: %s (%s), want PoweringOff for the guest's grace period", State(vm), describeVMI(vm))
	}
	if err := e.s.Reset(ctx, key, system.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	e.forced(t, key, on.VMI.GetUID(), "ForceOff during the graceful shutdown")
	e.eventuallyFor(t, key, "ForceOff during the graceful shutdown: VMI gone", forceDeadline, vmiGone)
}

// testForceOffControl: without the subresource call ForceOff is only
// runStrategy Halted: once its graceful stop is under way, the hung guest
// is still there with its hour's grace.
func testForceOffControl(t *testing.T, e *env) {
	key, on := hungGuestOn(t, e, "control")
	if err := e.s.Reset(t.Context(), key, system.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	e.stopHeld(t, key, on.VMI.GetUID(), "control: ForceOff without virt-api's stop")
}
