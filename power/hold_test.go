package power

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

var importing = system.MediaSlot{Slot: "cd0", Image: "http://x/boot.iso", Phase: system.MediaImporting, InsertID: "i1", ClaimName: "pvc-i1"}

// noEvents feeds a Reconciler no events: the test calls it.
type noEvents struct{}

func (noEvents) AddVMHandler(func(system.Key)) (func() error, error) {
	return func() error { return nil }, nil
}

// TestHeldPowerOn: a power-on held behind an import shows PoweringOn and
// never runs once nobody expects it: a ForceOff or GracefulShutdown
// cancels it even when the reconciler read it due just before (the race
// of the issue: its start is decided again on the fresh read), an eject of
// the insert it awaits cancels it, and its deadline drops it with no VM
// change to wake the reconciler. On the stock CRD variant only: the power
// intent is an annotation, the same in both list modes.
func TestHeldPowerOn(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	c := testcluster.SharedKubeVirt(t, crds.Stock)
	t.Run("shown PoweringOn while held", func(t *testing.T) {
		e := startEnvWith(t, c, envOptions{noReconciler: true})
		key := e.heldOn(t, "shown")
		vm := e.live(t, key)
		if got := State(vm); got != system.PowerPoweringOn {
			t.Errorf("PowerState while held = %s, want PoweringOn", got)
		}
		if got := vm.Power.Awaits; len(got) != 1 || got["cd0"] != "i1" {
			t.Errorf("held power-on awaits %v, want cd0: i1", got)
		}
		if left := time.Until(vm.Power.Until); left <= DefaultHoldTimeout-time.Minute || left > DefaultHoldTimeout {
			t.Errorf("held until %s (%s from now), want about %s from now", vm.Power.Until, left, DefaultHoldTimeout)
		}
	})
	for _, off := range []system.ResetType{system.ResetForceOff, system.ResetGracefulShutdown} {
		t.Run(string(off)+" cancels a held power-on the reconciler read as due", func(t *testing.T) {
			e := startEnvWith(t, c, envOptions{noReconciler: true})
			r := e.manualReconciler(t)
			key := e.heldOn(t, "off-"+strings.ToLower(string(off)))
			e.setSlot(t, key, ready)
			due := e.cachedUntil(t, key, "held and imported", func(vm *apply.VM) bool {
				v, _ := e.s.judge(vm, time.Now())
				return v == heldRun
			})
			if err := e.s.Reset(t.Context(), key, off); err != nil {
				t.Fatal(err)
			}
			e.cachedUntil(t, key, "power-off seen", func(vm *apply.VM) bool { return !vm.Power.OnDeferred })
			// The reconciler goes on from its read of a moment ago.
			if err := r.deferred(t.Context(), key, due); err != nil {
				t.Fatal(err)
			}
			if err := r.Reconcile(t.Context(), key); err != nil {
				t.Fatal(err)
			}
			e.notStarted(t, key)
		})
	}
	t.Run("eject cancels a held power-on", func(t *testing.T) {
		e := startEnvWith(t, c, envOptions{noReconciler: true})
		r := e.manualReconciler(t)
		key := e.heldOn(t, "eject")
		e.eject(t, key, "cd0")
		e.cachedUntil(t, key, "eject seen", func(vm *apply.VM) bool { _, ok := vm.Slots["cd0"]; return !ok })
		if err := r.Reconcile(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		vm := e.notStarted(t, key)
		if vm.Power.OnDeferred || vm.Power.DroppedReason != "" {
			t.Errorf("power intent after the eject %+v, want none (cancelled, not dropped)", vm.Power)
		}
	})
	t.Run("eject then a new insert cancels a held power-on", func(t *testing.T) {
		e := startEnvWith(t, c, envOptions{noReconciler: true})
		r := e.manualReconciler(t)
		key := e.heldOn(t, "reinsert")
		e.eject(t, key, "cd0")
		next := ready
		next.InsertID, next.ClaimName = "i2", "pvc-i2"
		e.setSlot(t, key, next)
		e.cachedUntil(t, key, "new insert seen", func(vm *apply.VM) bool { return vm.Slots["cd0"].InsertID == "i2" })
		if err := r.Reconcile(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		e.notStarted(t, key)
	})
	t.Run("deadline drops a held power-on", func(t *testing.T) {
		e := startEnvWith(t, c, envOptions{holdTimeout: 2 * time.Second})
		key := e.heldOn(t, "deadline")
		// No VM change from here on: only the reconciler's own wake-up at
		// the deadline can drop it.
		vm := e.eventually(t, key, "held power-on expired", func(vm *apply.VM) bool {
			return !vm.Power.OnDeferred && strings.Contains(vm.Power.DroppedReason, "expired")
		})
		if got := State(vm); got != system.PowerOff || runStrategy(vm) != "Halted" || vm.VMI != nil {
			t.Errorf("after the deadline: PowerState %s runStrategy %s VMI %v, want Off, Halted, none", got, runStrategy(vm), vm.VMI != nil)
		}
	})
}

// heldOn creates VM name with an import in flight in cd0 and a Cd Once
// override, and powers it on: the power-on is held.
func (e *env) heldOn(t *testing.T, name string) system.Key {
	t.Helper()
	key := e.createVM(t, name)
	e.setSlot(t, key, importing)
	if _, err := e.s.SetBoot(t.Context(), key, system.BootPatch{Target: ptrTo(system.BootCd), Enabled: ptrTo(system.BootOnce)}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Reset(t.Context(), key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	if vm := e.live(t, key); !vm.Power.OnDeferred || runStrategy(vm) != "Halted" || vm.VMI != nil {
		t.Fatalf("On during an import: power %+v runStrategy %s VMI %v, want held", vm.Power, runStrategy(vm), vm.VMI != nil)
	}
	return key
}

// manualReconciler is a Reconciler fed no events: the test calls it.
func (e *env) manualReconciler(t *testing.T) *Reconciler {
	t.Helper()
	return NewReconciler(e.s, noEvents{}, 1) // no term runs: its requeues are dropped
}

// eject removes slot from the VM as media's Eject does.
func (e *env) eject(t *testing.T, key system.Key, slot string) {
	t.Helper()
	if _, err := e.w.Media(t.Context(), key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		delete(slots, slot)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// cachedUntil waits until the Writer's read (what the reconciler reads)
// satisfies cond and returns it.
func (e *env) cachedUntil(t *testing.T, key system.Key, what string, cond func(*apply.VM) bool) *apply.VM {
	t.Helper()
	var got *apply.VM
	testutil.Eventually(t, what+": the Writer reads it", 30*time.Second, 10*time.Millisecond, func(ctx context.Context) error {
		vm, err := e.w.Read(ctx, key)
		switch {
		case err != nil:
			return err
		case !cond(vm):
			return errors.New("read, not yet as wanted")
		}
		got = vm
		return nil
	})
	return got
}

// notStarted checks, on a live read after the reconciler ran, that nothing
// started the VM: runStrategy Halted, no Start request, no VMI, Off.
func (e *env) notStarted(t *testing.T, key system.Key) *apply.VM {
	t.Helper()
	vm := e.live(t, key)
	for _, r := range kubevirt.StateChangeRequestsOf(vm.Object) {
		if r.Action == kubevirt.StartRequest {
			t.Errorf("a Start request was added: %+v", kubevirt.StateChangeRequestsOf(vm.Object))
		}
	}
	if runStrategy(vm) != "Halted" || vm.VMI != nil || vm.Power.OnDeferred || State(vm) != system.PowerOff {
		t.Errorf("runStrategy %s, VMI %v, power %+v, PowerState %s: want Halted, none, nothing held, Off", runStrategy(vm), vm.VMI != nil, vm.Power, State(vm))
	}
	return vm
}
