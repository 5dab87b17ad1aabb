package kubevirt

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PhaseOf is a VMI's status.phase; "" for a nil VMI or none yet.
func PhaseOf(vmi *unstructured.Unstructured) Phase {
	if vmi == nil {
		return PhaseUnset
	}
	return Phase(StringAt(vmi.Object, VMIPhase...))
}

// Final reports whether a VMI ended (Succeeded or Failed): it never runs
// again, virt-controller makes a new one.
func Final(vmi *unstructured.Unstructured) bool {
	p := PhaseOf(vmi)
	return p == PhaseSucceeded || p == PhaseFailed
}

// Live reports whether vmi exists and is neither final nor being deleted.
func Live(vmi *unstructured.Unstructured) bool {
	return vmi != nil && !Final(vmi) && vmi.GetDeletionTimestamp() == nil
}

// VMIConditionOf returns a VMI's condition of type typ (zero when absent or
// vmi is nil).
func VMIConditionOf(vmi *unstructured.Unstructured, typ string) Condition {
	return conditionAt(vmi, VMIConditions, typ)
}

// PhaseTimeOf is the latest status.phaseTransitionTimestamps entry of a VMI
// for phase p, zero when there is none.
func PhaseTimeOf(vmi *unstructured.Unstructured, p Phase) time.Time {
	var latest time.Time
	for _, m := range elements(vmi.Object, VMIPhaseTransitions) {
		if m["phase"] != string(p) {
			continue
		}
		if at, err := time.Parse(time.RFC3339, StringAt(m, "phaseTransitionTimestamp")); err == nil && at.After(latest) {
			latest = at.UTC()
		}
	}
	return latest
}

// MACsOf maps a VMI's interface names to the MAC addresses it reports.
func MACsOf(vmi *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	if vmi == nil {
		return out
	}
	for _, m := range elements(vmi.Object, VMIInterfaces) {
		if name, mac := StringAt(m, KeyName), StringAt(m, VMIInterfaceMAC); name != "" && mac != "" {
			out[name] = mac
		}
	}
	return out
}

// VMIRebootPolicyOf is a VMI's spec.domain.rebootPolicy (what its guest
// reboot does), "" when unset.
func VMIRebootPolicyOf(vmi *unstructured.Unstructured) string {
	return StringAt(vmi.Object, VMIRebootPolicy...)
}

// VMIGracePeriodOf is a VMI's spec.terminationGracePeriodSeconds, how long
// virt-handler lets its guest shut down; set is false when the field is
// missing (KubeVirt's defaulting fills it on create).
func VMIGracePeriodOf(vmi *unstructured.Unstructured) (seconds int64, set bool) {
	seconds, set, err := unstructured.NestedInt64(vmi.Object, VMIGracePeriod...)
	return seconds, set && err == nil
}
