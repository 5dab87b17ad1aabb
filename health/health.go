package health

import (
	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Of returns the Status.Health of vm (see the package doc for the rules).
func Of(vm *apply.VM) system.Health {
	h := system.HealthOK
	for _, s := range vm.Slots {
		if s.Phase == system.MediaFailed {
			h = system.HealthWarning
		}
	}
	if vm.Power.DroppedReason != "" {
		h = system.HealthWarning
	}
	if system.In(kubevirt.PrintableStatusOf(vm.Object), kubevirt.CriticalStatuses) || kubevirt.VMConditionOf(vm.Object, kubevirt.ConditionFailure).True() {
		return system.HealthCritical
	}
	if vmi := vm.VMI; vmi != nil {
		if kubevirt.PhaseOf(vmi) == kubevirt.PhaseFailed {
			return system.HealthCritical
		}
		if c := kubevirt.VMIConditionOf(vmi, kubevirt.ConditionPaused); c.True() && c.Reason == kubevirt.ReasonPausedIOError {
			return system.HealthCritical
		}
	}
	return h
}

// Progress returns the BootProgress of vm (see the package doc).
func Progress(vm *apply.VM) system.BootProgress {
	vmi := vm.VMI
	if vmi == nil {
		return system.BootProgress{LastState: system.BootProgressNone}
	}
	if ts := vmi.GetDeletionTimestamp(); ts != nil {
		return system.BootProgress{LastState: system.BootProgressNone, LastStateTime: ts.UTC()}
	}
	p := kubevirt.PhaseOf(vmi)
	if p != kubevirt.PhaseRunning {
		// Not booting: not placed yet, or ended. The time is when the
		// current phase was entered.
		return system.BootProgress{LastState: system.BootProgressNone, LastStateTime: kubevirt.PhaseTimeOf(vmi, p)}
	}
	if c := kubevirt.VMIConditionOf(vmi, kubevirt.ConditionAgentConnected); c.True() {
		return system.BootProgress{LastState: system.BootProgressOSRunning, LastStateTime: c.LastTransitionTime}
	}
	return system.BootProgress{LastState: system.BootProgressOSBootStarted, LastStateTime: kubevirt.PhaseTimeOf(vmi, p)}
}
