package power

import (
	"context"
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// A Once boot override means the next boot, including a reboot the guest
// does itself (an installer that writes the disk and reboots). While a Once
// override lays out a boot, redfish-boot arms the VM template's rebootPolicy
// Terminate (apply.BuildBoot), so the VMI that boots the override's target
// carries it. What KubeVirt v1.9 then does with a guest reboot (read in its
// source):
//
//   - virt-launcher (pkg/virt-launcher/virtwrap/converter/compute,
//     RebootPolicyDomainConfigurator) maps Terminate to libvirt's
//     <on_reboot>destroy</on_reboot>; libvirt (qemu_process.c,
//     qemuProcessHandleShutdown, then the monitor EOF) stops the domain
//     with state Shutoff, reason Shutdown: to KubeVirt the same as a guest
//     power-off.
//   - virt-handler (pkg/virt-handler/vm.go, calculateVmPhaseForStatusReason)
//     turns Shutoff/Shutdown into VMI phase Succeeded. Nothing on the VMI
//     tells the reboot from a power-off (VEP 362's GuestTerminated condition
//     is not in v1.9).
//   - virt-controller (pkg/virt-controller/watch/vm, syncRunStrategy):
//     Always deletes the final VMI and starts a new one; RerunOnFailure
//     deletes a Succeeded VMI and starts none (only Failed ones rerun);
//     Manual leaves it. The bridge's power-on sets RerunOnFailure, so the
//     VM would stay off: a reboot would look like a shutdown.
//
// So when the override reverts (the next VMI runs), the Reconciler records
// that VMI's UID in the override (RebootVMI) if its spec has rebootPolicy
// Terminate, and when that VMI ends by itself it starts the VM again
// (unless its run strategy is Always: KubeVirt does), which boots the disk.
// Redfish PowerState stays On meanwhile. The cost: a guest that powers
// itself off during that boot is started again too (KubeVirt v1.9 cannot
// tell); a Redfish power-off or restart ends the watch first.

// rebootWatched: the override records a VMI whose end is a guest reboot.
func rebootWatched(vm *apply.VM) bool { return vm.Boot.RebootVMI != "" }

// rebootEnded: the watched VMI ended by itself (Succeeded, or already
// removed by virt-controller) and no other VMI exists yet.
func rebootEnded(vm *apply.VM) bool {
	if !rebootWatched(vm) {
		return false
	}
	if vm.VMI == nil {
		return true
	}
	return string(vm.VMI.GetUID()) == vm.Boot.RebootVMI && kubevirt.PhaseOf(vm.VMI) == kubevirt.PhaseSucceeded
}

// rebooted: a VMI other than the watched one runs (or already ended):
// the reboot is over.
func rebooted(vm *apply.VM) bool {
	if !rebootWatched(vm) || vm.VMI == nil || string(vm.VMI.GetUID()) == vm.Boot.RebootVMI {
		return false
	}
	return kubevirt.PhaseOf(vm.VMI) == kubevirt.PhaseRunning || kubevirt.Final(vm.VMI)
}

// rebooting: Redfish reports On for a watched VM between the end of the
// watched VMI and the next one running (a reboot, on bare metal, keeps the
// power on), unless the VM was switched off since.
func rebooting(vm *apply.VM) bool {
	if !rebootWatched(vm) || runStrategyOf(vm) == runOff {
		return false
	}
	if vm.VMI == nil {
		return true
	}
	if string(vm.VMI.GetUID()) == vm.Boot.RebootVMI {
		return kubevirt.Final(vm.VMI) || vm.VMI.GetDeletionTimestamp() != nil
	}
	return kubevirt.PhaseOf(vm.VMI) != kubevirt.PhaseRunning && !kubevirt.Final(vm.VMI)
}

// rebootVMI is what revertOnce records: the VMI that booted the override,
// when its spec makes a guest reboot end it.
func rebootVMI(vm *apply.VM) string {
	if vm.VMI != nil && kubevirt.VMIRebootPolicyOf(vm.VMI) == kubevirt.RebootPolicyTerminate {
		return string(vm.VMI.GetUID())
	}
	return ""
}

// followReboot finishes a guest reboot of a watched VM: it starts the VM
// again when the watched VMI ended by itself (KubeVirt does under Always),
// and forgets the watch when the next VMI runs or the VM was switched off.
func (r *Reconciler) followReboot(ctx context.Context, key system.Key, vm *apply.VM) error {
	switch {
	case rebooted(vm), rebootEnded(vm) && !meantToRunOrManual(vm):
		return r.s.forgetReboot(ctx, key, vm.Boot.RebootVMI)
	case !rebootEnded(vm) || runStrategyOf(vm) == kubevirt.RunStrategyAlways:
		return nil
	}
	watched := vm.Boot.RebootVMI
	logctx.From(ctx).Info("guest rebooted under rebootPolicy Terminate: starting the VM again", "vm", key, "vmi", watched, "runStrategy", runStrategyOf(vm))
	_, err := r.s.startIf(ctx, key, func(vm *apply.VM) bool {
		return vm.Boot.RebootVMI == watched && rebootEnded(vm) && meantToRunOrManual(vm)
	}, nil)
	if err != nil {
		return fmt.Errorf("start %s after its guest rebooted: %w", key, err)
	}
	return nil
}

// meantToRunOrManual: the run strategy does not keep the VM off (Manual
// waits for a start, as after a power-on).
func meantToRunOrManual(vm *apply.VM) bool {
	return meantToRun(vm) || runStrategyOf(vm) == kubevirt.RunStrategyManual
}

// forgetReboot clears the reboot watch on VMI uid ("" for any): before a
// Redfish power-off or restart (the VMI they end is not a guest reboot), and
// when the reboot is over.
func (s *Service) forgetReboot(ctx context.Context, key system.Key, uid string) error {
	_, err := s.w.Boot(ctx, key, func(_ *apply.VM, o *system.BootOverride) error {
		if o.RebootVMI == "" || (uid != "" && o.RebootVMI != uid) {
			return apply.ErrNoChange
		}
		o.RebootVMI = ""
		return nil
	})
	if err != nil {
		return fmt.Errorf("forget the reboot watch of %s: %w", key, err)
	}
	return nil
}

// endRebootWatch forgets a reboot watch the cached read shows, before a
// Redfish power-off or restart ends the VMI itself.
func (s *Service) endRebootWatch(ctx context.Context, key system.Key) error {
	vm, err := s.w.Read(ctx, key)
	if err != nil {
		return err
	}
	if !rebootWatched(vm) {
		return nil
	}
	return s.forgetReboot(ctx, key, "")
}
