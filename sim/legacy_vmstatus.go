// This file is part of the legacy VM controller (Options.LegacyVMController):
// the simulator's own imitation of virt-controller, kept ONLY for the suites
// not yet migrated to KubeVirt's real virt-controller (listed in
// docs/testing-kubevirt.md). New tests use testcluster.Options.VirtController.

package sim

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// vmStatusKeys are the VM status fields the simulator owns.
var vmStatusKeys = []string{"created", "ready", "printableStatus", "runStrategy", "observedGeneration", "desiredGeneration", "conditions"}

// syncVMStatus writes the VM status virt-controller would show, through
// the status subresource, when it differs from what is there.
func (s *Simulator) syncVMStatus(ctx context.Context, vm, vmi *unstructured.Unstructured) error {
	current, _, _ := unstructured.NestedMap(vm.Object, "status")
	want, err := VMStatus(vm, vmi, current)
	if err != nil {
		return err
	}
	have := map[string]any{}
	patch := map[string]any{}
	for _, k := range vmStatusKeys {
		if v, ok := current[k]; ok {
			have[k] = v
			patch[k] = nil
		}
		if v, ok := want[k]; ok {
			patch[k] = v
		}
	}
	trim := trimFirstRequest(vm, vmi)
	if trim {
		// Drop the request this sync acted on, preconditioned on the read:
		// a merge patch replaces the whole list, and one appended since
		// must not be lost (the sync is retried on 409).
		reqs := stateChangeRequests(vm)[1:]
		if len(reqs) == 0 {
			reqs = nil
		}
		patch["stateChangeRequests"] = reqs
	} else if equality.Semantic.DeepEqual(have, want) {
		return nil
	}
	return s.patchVM(ctx, vm, map[string]any{"status": patch}, trim, "status")
}

// VMStatus computes the status fields the simulator owns for vm given its
// VMI (nil if none); current is the status as read, whose condition
// transition times are kept when a condition did not change.
func VMStatus(vm, vmi *unstructured.Unstructured, current map[string]any) (map[string]any, error) {
	strategy := RunStrategy(vm)
	live := vmi != nil && vmi.GetDeletionTimestamp() == nil
	ready := live && vmiPhase(vmi) == kubevirtv1.Running
	out := map[string]any{
		"printableStatus":    string(PrintableStatus(vm, vmi)),
		"observedGeneration": vm.GetGeneration(),
		"desiredGeneration":  vm.GetGeneration(),
	}
	if vmi != nil {
		out["created"] = true
	}
	// Recorded from the first VMI on; RerunOnFailure starts a VM whose
	// recorded strategy differs from spec (the strategy just changed).
	if rs, _ := current["runStrategy"].(string); rs != "" || vmi != nil {
		out["runStrategy"] = string(strategy)
	}
	if ready {
		out["ready"] = true
	}
	readyCond := condition(string(kubevirtv1.VirtualMachineReady), ready, "", "")
	switch {
	case vmi == nil:
		readyCond = condition(string(kubevirtv1.VirtualMachineReady), false, "VMINotExists", "VMI does not exist")
	case !ready:
		readyCond = condition(string(kubevirtv1.VirtualMachineReady), false, "GuestNotRunning", fmt.Sprintf("VMI is %s", PrintableStatus(vm, vmi)))
	}
	conds := []any{readyCond}
	if live && !final(vmiPhase(vmi)) {
		spec, _, _ := unstructured.NestedMap(vm.Object, "spec", "template", "spec")
		hash, err := specHash(spec)
		if err != nil {
			return nil, err
		}
		if hash != vmi.GetAnnotations()[AnnotationTemplateHash] {
			conds = append(conds, condition(string(kubevirtv1.VirtualMachineRestartRequired), true, "TemplateChanged",
				"the template spec changed since the VMI started; a restart applies it"))
		}
	}
	keepTransitionTimes(conds, current)
	out["conditions"] = conds
	return out, nil
}

// keepTransitionTimes copies lastTransitionTime from the current conditions
// of the same type and status, so an unchanged status is not rewritten.
func keepTransitionTimes(conds []any, current map[string]any) {
	old, _, _ := unstructured.NestedSlice(current, "conditions")
	for _, c := range conds {
		nc := c.(map[string]any)
		for _, o := range old {
			oc, ok := o.(map[string]any)
			if ok && oc["type"] == nc["type"] && oc["status"] == nc["status"] {
				if t, ok := oc["lastTransitionTime"]; ok {
					nc["lastTransitionTime"] = t
				}
			}
		}
	}
}

// PrintableStatus is the VM's status.printableStatus given its VMI.
func PrintableStatus(vm, vmi *unstructured.Unstructured) kubevirtv1.VirtualMachinePrintableStatus {
	switch {
	case vm.GetDeletionTimestamp() != nil:
		return kubevirtv1.VirtualMachineStatusTerminating
	case vmi == nil:
		return kubevirtv1.VirtualMachineStatusStopped
	case vmi.GetDeletionTimestamp() != nil:
		return kubevirtv1.VirtualMachineStatusStopping
	}
	switch vmiPhase(vmi) {
	case kubevirtv1.Running:
		return kubevirtv1.VirtualMachineStatusRunning
	case kubevirtv1.Succeeded:
		return kubevirtv1.VirtualMachineStatusStopped
	case kubevirtv1.Failed:
		switch RunStrategy(vm) {
		case kubevirtv1.RunStrategyAlways, kubevirtv1.RunStrategyRerunOnFailure:
			return kubevirtv1.VirtualMachineStatusCrashLoopBackOff
		}
		return kubevirtv1.VirtualMachineStatusStopped
	}
	return kubevirtv1.VirtualMachineStatusStarting
}
