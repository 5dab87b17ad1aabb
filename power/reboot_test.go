package power

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestGuestReboot: an installer's flow, on both CRD variants: insert a CD,
// boot Cd Once, power on, the guest reboots itself. With rebootPolicy
// Terminate armed the next boot is the disk and Redfish says On throughout.
// The negative control (rebootPolicy switched off) and a cluster that
// refuses the field both show the install loop: the CD boots again.
func TestGuestReboot(t *testing.T) {
	eachVariant(t, func(t *testing.T, _ crds.Variant, c *testcluster.Cluster) {
		t.Run("next boot is the disk", func(t *testing.T) { testGuestRebootBootsDisk(t, startEnv(t, c)) })
		t.Run("negative control: rebootPolicy off, the CD boots again", func(t *testing.T) {
			testGuestRebootLoops(t, startEnvWith(t, c, envOptions{disableRebootPolicy: true}))
		})
		t.Run("cluster refuses rebootPolicy: fallback, the CD boots again", func(t *testing.T) {
			testGuestRebootLoops(t, startEnvWith(t, c, envOptions{rebootPolicyGateOff: true}))
		})
		t.Run("ForceOff during the watched boot stays off", func(t *testing.T) { testRebootWatchThenOff(t, startEnv(t, c)) })
		t.Run("runStrategy Always: KubeVirt restarts it alone", func(t *testing.T) { testGuestRebootAlways(t, startEnv(t, c)) })
	})
}

// cdOnceBooted inserts a Ready CD, sets Cd Once, powers on and waits for
// the override to revert; it returns the read then.
func cdOnceBooted(t *testing.T, e *env, name string) (system.Key, *apply.VM) {
	t.Helper()
	ctx := t.Context()
	key := e.createVM(t, name)
	e.setSlot(t, key, ready)
	if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Target: ptrTo(system.BootCd), Enabled: ptrTo(system.BootOnce)}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	first := e.eventually(t, key, "CD boot running, override reverted", func(vm *apply.VM) bool {
		return State(vm) == system.PowerOn && vm.Boot.Enabled == system.BootDisabled && len(sim.Boots(vm.VMI)) == 1
	})
	if got := sim.Boots(first.VMI); got[0] != apply.DiskName("cd0") {
		t.Fatalf("the Once boot booted %v, want the CD-ROM %s", got, apply.DiskName("cd0"))
	}
	if got := kubevirt.RebootPolicyOf(first.Object); got != "" {
		t.Errorf("rebootPolicy %q left on the template after the override ended", got)
	}
	return key, first
}

func testGuestRebootBootsDisk(t *testing.T, e *env) {
	key, first := cdOnceBooted(t, e, "installer")
	next := e.guestRebootToDisk(t, key, first)
	if rs := runStrategy(next); rs != runOn {
		t.Errorf("runStrategy %s after the reboot, want %s", rs, runOn)
	}
}

// testGuestRebootAlways: under the author's runStrategy Always virt-controller
// replaces the ended VMI itself; the bridge adds no Start request.
func testGuestRebootAlways(t *testing.T, e *env) {
	key, first := cdOnceBooted(t, e, "always")
	patch := []byte(`{"spec":{"runStrategy":"Always"}}`)
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Patch(t.Context(), key.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "test-author"}); err != nil {
		t.Fatal(err)
	}
	next := e.guestRebootToDisk(t, key, first)
	if rs := runStrategy(next); rs != "Always" {
		t.Errorf("runStrategy %s after the reboot, want the author's Always", rs)
	}
	if reqs := kubevirt.StateChangeRequestsOf(next.Object); len(reqs) != 0 {
		t.Errorf("state change requests %v after a reboot KubeVirt restarted alone", reqs)
	}
}

// guestRebootToDisk lets the guest of the Cd/Once boot first reboot itself
// and checks that Redfish says On throughout and the next VMI boots the
// disk; it returns the read with the next VMI running.
func (e *env) guestRebootToDisk(t *testing.T, key system.Key, first *apply.VM) *apply.VM {
	t.Helper()
	ctx := t.Context()
	if got := kubevirt.VMIRebootPolicyOf(first.VMI); got != kubevirt.RebootPolicyTerminate {
		t.Fatalf("the CD boot's VMI has rebootPolicy %q, want %s", got, kubevirt.RebootPolicyTerminate)
	}
	first = e.eventually(t, key, "reboot watch on the CD boot", func(vm *apply.VM) bool {
		return vm.Boot.RebootVMI == string(first.VMI.GetUID())
	})
	if err := e.sim.GuestReboot(ctx, key); err != nil {
		t.Fatal(err)
	}
	var states []system.PowerState
	next := e.eventually(t, key, "the next VMI running, the watch over", func(vm *apply.VM) bool {
		if st := State(vm); len(states) == 0 || states[len(states)-1] != st {
			states = append(states, st)
		}
		return vm.VMI != nil && vm.VMI.GetUID() != first.VMI.GetUID() && kubevirt.PhaseOf(vm.VMI) == kubevirt.PhaseRunning && vm.Boot.RebootVMI == ""
	})
	if !slices.Equal(states, []system.PowerState{system.PowerOn}) {
		t.Errorf("PowerState across the guest reboot went %v, want On throughout", states)
	}
	if got := sim.Boots(next.VMI); !slices.Equal(got, []string{"rootdisk"}) {
		t.Errorf("the boot after the guest reboot booted %v, want the disk (rootdisk)", got)
	}
	if got := kubevirt.VMIRebootPolicyOf(next.VMI); got != "" {
		t.Errorf("the disk boot's VMI has rebootPolicy %q, want none (the override ended)", got)
	}
	return next
}

// testGuestRebootLoops: without rebootPolicy Terminate KubeVirt reboots the
// domain in place with the boot order it started with: the CD again.
func testGuestRebootLoops(t *testing.T, e *env) {
	ctx := t.Context()
	key, first := cdOnceBooted(t, e, "loop")
	if got := kubevirt.VMIRebootPolicyOf(first.VMI); got != "" {
		t.Fatalf("the CD boot's VMI has rebootPolicy %q: the control is not one", got)
	}
	if err := e.sim.GuestReboot(ctx, key); err != nil {
		t.Fatal(err)
	}
	again := e.eventually(t, key, "the guest rebooted in place", func(vm *apply.VM) bool {
		return vm.VMI != nil && len(sim.Boots(vm.VMI)) == 2
	})
	if again.VMI.GetUID() != first.VMI.GetUID() {
		t.Errorf("the VMI was replaced; KubeVirt reboots in place under rebootPolicy Reboot")
	}
	if got := sim.Boots(again.VMI); got[1] != apply.DiskName("cd0") {
		t.Errorf("the in-place reboot booted %v; the install loop this control shows is the CD booting again", got)
	}
	if st := State(again); st != system.PowerOn {
		t.Errorf("PowerState %s after an in-place reboot, want On", st)
	}
}

// testRebootWatchThenOff: a Redfish ForceOff of the watched VMI is a power
// off, not a guest reboot: the VM stays off and the watch is gone.
func testRebootWatchThenOff(t *testing.T, e *env) {
	ctx := t.Context()
	key, first := cdOnceBooted(t, e, "watchoff")
	e.eventually(t, key, "reboot watch on the CD boot", func(vm *apply.VM) bool {
		return vm.Boot.RebootVMI == string(first.VMI.GetUID())
	})
	if err := e.s.Reset(ctx, key, system.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	vm := e.eventually(t, key, "off", func(vm *apply.VM) bool { return vm.VMI == nil })
	if vm.Boot.RebootVMI != "" {
		t.Errorf("reboot watch %s left after ForceOff", vm.Boot.RebootVMI)
	}
	if st := State(vm); st != system.PowerOff {
		t.Errorf("PowerState %s after ForceOff, want Off", st)
	}
	e.staysOff(t, key)
	// The guest shutdown path still works: On, then the guest powers off
	// (no watch now: it stays off, as before).
	if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, key, "on from the disk", func(vm *apply.VM) bool { return onWithNewVMI(vm, first) })
	if err := e.sim.GuestShutdown(ctx, key); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, key, "off after guest shutdown", func(vm *apply.VM) bool { return vm.VMI == nil })
	testutil.Never(t, "after the guest shut down with no watch", 500*time.Millisecond, 20*time.Millisecond, func(context.Context) error {
		if st := State(e.live(t, key)); st != system.PowerOff {
			return fmt.Errorf("PowerState %s, want Off", st)
		}
		return nil
	})
}
