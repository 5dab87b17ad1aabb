// This file is part of the legacy VM controller (Options.LegacyVMController):
// the simulator's own imitation of virt-controller, kept ONLY for the suites
// not yet migrated to KubeVirt's real virt-controller (listed in
// docs/testing-kubevirt.md). New tests use testcluster.Options.VirtController.

package sim

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// status.stateChangeRequests is how virt-api's start, stop and restart
// subresources (and virt-controller itself, after a failure under
// RerunOnFailure) ask virt-controller to act on a VM; the simulator reads
// and trims them the way virt-controller v1.9 does: only the FIRST request
// is considered, a Stop carries the UID of the VMI it stops.

// stateChangeRequests returns the VM's status.stateChangeRequests.
func stateChangeRequests(vm *unstructured.Unstructured) []any {
	reqs, _, _ := unstructured.NestedSlice(vm.Object, "status", "stateChangeRequests")
	return reqs
}

// firstRequest returns the action and uid of the first state change request.
func firstRequest(vm *unstructured.Unstructured) (action kubevirtv1.StateChangeRequestAction, uid string) {
	reqs := stateChangeRequests(vm)
	if len(reqs) == 0 {
		return "", ""
	}
	r, _ := reqs[0].(map[string]any)
	a, _ := r["action"].(string)
	u, _ := r["uid"].(string)
	return kubevirtv1.StateChangeRequestAction(a), u
}

// hasStartRequest: the first request is a Start.
func hasStartRequest(vm *unstructured.Unstructured) bool {
	a, _ := firstRequest(vm)
	return a == kubevirtv1.StartRequest
}

// hasStopRequestFor: the first request is a Stop of exactly this VMI.
func hasStopRequestFor(vm, vmi *unstructured.Unstructured) bool {
	a, uid := firstRequest(vm)
	return vmi != nil && a == kubevirtv1.StopRequest && uid != "" && uid == string(vmi.GetUID())
}

// trimFirstRequest reports whether virt-controller would drop the first
// request after a sync that saw vmi: a Stop once its VMI is gone (or
// replaced, or it names none), a Start once a live VMI exists.
func trimFirstRequest(vm, vmi *unstructured.Unstructured) bool {
	a, uid := firstRequest(vm)
	switch a {
	case kubevirtv1.StopRequest:
		return vmi == nil || uid == "" || uid != string(vmi.GetUID())
	case kubevirtv1.StartRequest:
		return vmi != nil && vmi.GetDeletionTimestamp() == nil && !final(vmiPhase(vmi))
	}
	return false
}

// addStartRequest appends a Start request to the VM's status, guarded by
// the resourceVersion read (virt-controller does this after deleting a
// Failed VMI under RerunOnFailure, so a new one starts).
func (s *Simulator) addStartRequest(ctx context.Context, vm *unstructured.Unstructured) error {
	reqs := append(stateChangeRequests(vm), map[string]any{"action": string(kubevirtv1.StartRequest)})
	return s.patchVM(ctx, vm, map[string]any{"status": map[string]any{"stateChangeRequests": reqs}}, true, "status")
}

// startHalted plays virt-controller's answer to a Start request on a
// Halted VM without a VMI: the run strategy becomes Always (spec.running
// true when the VM uses the deprecated field).
func (s *Simulator) startHalted(ctx context.Context, vm *unstructured.Unstructured) error {
	spec := map[string]any{"runStrategy": string(kubevirtv1.RunStrategyAlways)}
	if _, found, _ := unstructured.NestedString(vm.Object, "spec", "runStrategy"); !found {
		spec = map[string]any{"running": true}
	}
	return s.patchVM(ctx, vm, map[string]any{"spec": spec}, true)
}

// patchVM merge-patches vm (the subresource when given) as virt-controller.
// With precondition it carries the resourceVersion read: a request appended
// since is never lost (the sync is retried from a fresh read on 409).
func (s *Simulator) patchVM(ctx context.Context, vm *unstructured.Unstructured, patch map[string]any, precondition bool, subresource ...string) error {
	if precondition {
		patch["metadata"] = map[string]any{"resourceVersion": vm.GetResourceVersion()}
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("marshal VM patch: %w", err)
	}
	_, err = s.dyn.Resource(VMResource).Namespace(vm.GetNamespace()).Patch(ctx, vm.GetName(), types.MergePatchType, b,
		metav1.PatchOptions{FieldManager: "virt-controller"}, subresource...)
	if err != nil {
		return fmt.Errorf("patch VM %s/%s %v: %w", vm.GetNamespace(), vm.GetName(), subresource, err)
	}
	return nil
}
