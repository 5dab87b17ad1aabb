package power

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// VMI phases (kubevirt.io/api core/v1 VirtualMachineInstancePhase).
const (
	phasePending    = "Pending"
	phaseScheduling = "Scheduling"
	phaseScheduled  = "Scheduled"
	phaseRunning    = "Running"
	phaseSucceeded  = "Succeeded"
	phaseFailed     = "Failed"
)

// State is the Redfish PowerState of a VM, from its VMI only:
//
//   - no VMI, or a VMI in a final phase (Succeeded, Failed): Off;
//   - a VMI being deleted: PoweringOff;
//   - Pending, Scheduling, Scheduled (or no phase yet): PoweringOn;
//   - Running: On, or Paused when its Paused condition is True;
//   - but On throughout a guest reboot the bridge follows (reboot.go): from
//     the end of the VMI that booted a Once override to the next one Running.
func State(vm *apply.VM) system.PowerState {
	if rebooting(vm) {
		return system.PowerOn // a guest reboot under rebootPolicy Terminate (reboot.go)
	}
	vmi := vm.VMI
	if vmi == nil || final(vmi) {
		return system.PowerOff
	}
	if vmi.GetDeletionTimestamp() != nil {
		return system.PowerPoweringOff
	}
	switch phase(vmi) {
	case phaseRunning:
		if paused(vmi) {
			return system.PowerPaused
		}
		return system.PowerOn
	case "", phasePending, phaseScheduling, phaseScheduled:
		return system.PowerPoweringOn
	}
	return system.PowerOn // Unknown: the VMI exists and is not final
}

func phase(vmi *unstructured.Unstructured) string {
	p, _, _ := unstructured.NestedString(vmi.Object, "status", "phase")
	return p
}

func final(vmi *unstructured.Unstructured) bool {
	p := phase(vmi)
	return p == phaseSucceeded || p == phaseFailed
}

// live reports whether vm has a VMI that is neither final nor being deleted.
func live(vm *apply.VM) bool { return liveVMI(vm.VMI) }

// liveVMI reports whether vmi exists and is neither final nor being deleted.
func liveVMI(vmi *unstructured.Unstructured) bool {
	return vmi != nil && !final(vmi) && vmi.GetDeletionTimestamp() == nil
}

func paused(vmi *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(vmi.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Paused" && m["status"] == "True" {
			return true
		}
	}
	return false
}

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
