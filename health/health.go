package health

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// criticalStatuses are the VM printableStatus values of a VM that cannot
// run as asked.
var criticalStatuses = []kubevirtv1.VirtualMachinePrintableStatus{
	kubevirtv1.VirtualMachineStatusCrashLoopBackOff,
	kubevirtv1.VirtualMachineStatusUnschedulable,
	kubevirtv1.VirtualMachineStatusErrImagePull,
	kubevirtv1.VirtualMachineStatusImagePullBackOff,
	kubevirtv1.VirtualMachineStatusPvcNotFound,
	kubevirtv1.VirtualMachineStatusDataVolumeError,
	kubevirtv1.VirtualMachineStatusUnknown,
}

// pausedIOError is the reason of the Paused condition KubeVirt sets when
// the guest was paused on a storage I/O error.
const pausedIOError = "PausedIOError"

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
	ps := kubevirtv1.VirtualMachinePrintableStatus(str(vm.Object.Object, "status", "printableStatus"))
	if system.In(ps, criticalStatuses) || conditionTrue(vm.Object.Object, string(kubevirtv1.VirtualMachineFailure)) {
		return system.HealthCritical
	}
	if vmi := vm.VMI; vmi != nil {
		if phase(vmi) == kubevirtv1.Failed {
			return system.HealthCritical
		}
		if c := condition(vmi.Object, string(kubevirtv1.VirtualMachineInstancePaused)); c["status"] == "True" && c["reason"] == pausedIOError {
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
	p := phase(vmi)
	if p != kubevirtv1.Running {
		// Not booting: not placed yet, or ended. The time is when the
		// current phase was entered.
		return system.BootProgress{LastState: system.BootProgressNone, LastStateTime: phaseTime(vmi, p)}
	}
	if c := condition(vmi.Object, string(kubevirtv1.VirtualMachineInstanceAgentConnected)); c["status"] == "True" {
		var at time.Time
		if t, err := time.Parse(time.RFC3339, str(c, "lastTransitionTime")); err == nil {
			at = t.UTC()
		}
		return system.BootProgress{LastState: system.BootProgressOSRunning, LastStateTime: at}
	}
	return system.BootProgress{LastState: system.BootProgressOSBootStarted, LastStateTime: phaseTime(vmi, p)}
}

func phase(vmi *unstructured.Unstructured) kubevirtv1.VirtualMachineInstancePhase {
	return kubevirtv1.VirtualMachineInstancePhase(str(vmi.Object, "status", "phase"))
}

// phaseTime is the latest status.phaseTransitionTimestamps entry for p,
// zero when there is none.
func phaseTime(vmi *unstructured.Unstructured, p kubevirtv1.VirtualMachineInstancePhase) time.Time {
	entries, _, _ := unstructured.NestedSlice(vmi.Object, "status", "phaseTransitionTimestamps")
	var latest time.Time
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok || m["phase"] != string(p) {
			continue
		}
		if at, err := time.Parse(time.RFC3339, str(m, "phaseTransitionTimestamp")); err == nil && at.After(latest) {
			latest = at.UTC()
		}
	}
	return latest
}

// condition returns the status.conditions entry of type typ, nil if absent.
func condition(obj map[string]any, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

func conditionTrue(obj map[string]any, typ string) bool {
	return condition(obj, typ)["status"] == "True"
}

func str(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}
