package power

import (
	"time"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// State is the Redfish PowerState of a VM, from its VMI only:
//
//   - no VMI, or a VMI in a final phase (Succeeded, Failed): Off;
//   - a VMI being deleted: PoweringOff;
//   - Pending, Scheduling, Scheduled (or no phase yet): PoweringOn;
//   - Running: On, or Paused when its Paused condition is True;
//   - but On throughout a guest reboot the bridge follows (reboot.go): from
//     the end of the VMI that booted a Once override to the next one Running;
//   - and PoweringOn instead of Off while a power-on is held behind a
//     media import (hold.go), until it runs, is cancelled or expires;
//   - and PoweringOn instead of Off or PoweringOff while an accepted
//     power-on waits for virt-controller ([startPending]): after a VMI that
//     ended before it ran (a ForceOff of a VM still starting) KubeVirt
//     backs the next start off (10 s and more), and the client's On must
//     not read as refused meanwhile. It reads PoweringOn until a VMI runs
//     or the power-on is abandoned (a power-off withdraws the Start
//     request and sets Halted).
func State(vm *apply.VM) system.PowerState {
	if rebooting(vm) {
		return system.PowerOn // a guest reboot under rebootPolicy Terminate (reboot.go)
	}
	vmi := vm.VMI
	if vmi == nil || kubevirt.Final(vmi) {
		if held(vm, time.Now()) || startPending(vm) {
			return system.PowerPoweringOn
		}
		return system.PowerOff
	}
	if vmi.GetDeletionTimestamp() != nil {
		if startPending(vm) {
			return system.PowerPoweringOn
		}
		return system.PowerPoweringOff
	}
	switch kubevirt.PhaseOf(vmi) {
	case kubevirt.PhaseRunning:
		if kubevirt.VMIConditionOf(vmi, kubevirt.ConditionPaused).True() {
			return system.PowerPaused
		}
		return system.PowerOn
	case kubevirt.PhaseUnset, kubevirt.PhasePending, kubevirt.PhaseScheduling, kubevirt.PhaseScheduled:
		return system.PowerPoweringOn
	}
	return system.PowerOn // Unknown: the VMI exists and is not final
}

// startPending reports whether vm carries an accepted power-on that
// virt-controller has not acted on yet: a Start request is the last of its
// status.stateChangeRequests (virt-controller removes it when it creates
// the VMI) and its runStrategy is not Halted (a power-off withdraws the
// Start first, then sets Halted).
func startPending(vm *apply.VM) bool {
	if vm.Object == nil || runStrategyOf(vm) == kubevirt.RunStrategyHalted {
		return false
	}
	reqs := kubevirt.StateChangeRequestsOf(vm.Object)
	return len(reqs) > 0 && reqs[len(reqs)-1].Action == kubevirt.StartRequest
}

// live reports whether vm has a VMI that is neither final nor being deleted.
func live(vm *apply.VM) bool { return kubevirt.Live(vm.VMI) }

// busySlot returns the first slot whose import is in flight.
func busySlot(vm *apply.VM) (system.MediaSlot, bool) {
	for _, s := range vm.Slots {
		if s.Phase.Busy() {
			return s, true
		}
	}
	return system.MediaSlot{}, false
}

// failedSlot returns the first slot whose import failed.
func failedSlot(vm *apply.VM) (system.MediaSlot, bool) {
	for _, s := range vm.Slots {
		if s.Phase == system.MediaFailed {
			return s, true
		}
	}
	return system.MediaSlot{}, false
}
