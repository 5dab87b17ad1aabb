// This file is part of the legacy VM controller (Options.LegacyVMController):
// the simulator's own imitation of virt-controller, kept ONLY for the suites
// not yet migrated to KubeVirt's real virt-controller (listed in
// docs/testing-kubevirt.md). New tests use testcluster.Options.VirtController.

package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// syncVMI plays virt-handler: walk a new VMI to Running (or Failed when its
// spec is corrupt) and stop a deleted one.
func (s *Simulator) legacySyncVMI(ctx context.Context, k string) (time.Duration, error) {
	vmi := s.getU(k, vmiInformer)
	if vmi == nil {
		return 0, nil
	}
	if vmi.GetDeletionTimestamp() != nil {
		return s.legacyStopVMI(ctx, vmi)
	}
	half := s.opts.StartDelay / 2
	switch vmiPhase(vmi) {
	case kubevirtv1.VmPhaseUnset, kubevirtv1.Pending:
		return 0, s.legacySetVMIPhase(ctx, vmi, kubevirtv1.Scheduling, nil)
	case kubevirtv1.Scheduling:
		if wait := half - s.inPhaseFor(vmi); wait > 0 {
			return wait, nil
		}
		return 0, s.legacySetVMIPhase(ctx, vmi, kubevirtv1.Scheduled, map[string]any{"nodeName": NodeName})
	case kubevirtv1.Scheduled:
		if wait := s.opts.StartDelay - half - s.inPhaseFor(vmi); wait > 0 {
			return wait, nil
		}
		spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
		if problems := Problems(spec); len(problems) > 0 {
			s.vmisFailed.Add(1)
			msg := strings.Join(problems, "; ")
			return 0, s.legacySetVMIPhase(ctx, vmi, kubevirtv1.Failed, map[string]any{
				"reason":     msg,
				"conditions": []any{condition(string(kubevirtv1.VirtualMachineInstanceReady), false, "GuestCrashed", msg)},
			})
		}
		return 0, s.legacySetVMIPhaseAnnotated(ctx, vmi, kubevirtv1.Running, map[string]any{
			"interfaces": interfaceStatus(vmi),
			"conditions": []any{condition(string(kubevirtv1.VirtualMachineInstanceReady), true, "", "")},
		}, bootsAfterOne(vmi))
	}
	return 0, nil
}

// stopVMI models a graceful stop: the deleted VMI keeps running for
// StopDelay, then turns Succeeded and the finalizer is removed.
//
// A forced delete (DeleteOptions.GracePeriodSeconds 0) cannot be told
// apart: measured on kube-apiserver v1.37.2, a custom resource with a
// finalizer records deletionGracePeriodSeconds 0 whatever the request
// said (nil, 0 or 30). Like virt-handler, the simulator goes by the VMI's
// spec.terminationGracePeriodSeconds instead: 0 stops it at once.
func (s *Simulator) legacyStopVMI(ctx context.Context, vmi *unstructured.Unstructured) (time.Duration, error) {
	if !slices.Contains(vmi.GetFinalizers(), kubevirtv1.VirtualMachineInstanceFinalizer) {
		return 0, nil
	}
	if wait := s.stopWait(vmi); wait > 0 {
		return wait, nil
	}
	if !final(vmiPhase(vmi)) {
		err := s.legacySetVMIPhase(ctx, vmi, kubevirtv1.Succeeded, map[string]any{
			"conditions": []any{condition(string(kubevirtv1.VirtualMachineInstanceReady), false, "Stopped", "VMI was stopped")},
		})
		if err != nil {
			return 0, err
		}
		// Remove the finalizer on the next pass, from a fresh read.
		return 0, nil
	}
	rest := slices.DeleteFunc(slices.Clone(vmi.GetFinalizers()), func(f string) bool {
		return f == kubevirtv1.VirtualMachineInstanceFinalizer
	})
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/finalizers", "value": vmi.GetFinalizers()},
		{"op": "replace", "path": "/metadata/finalizers", "value": rest},
	})
	if err != nil {
		return 0, fmt.Errorf("finalizer patch: %w", err)
	}
	_, err = s.dyn.Resource(VMIResource).Namespace(vmi.GetNamespace()).Patch(ctx, vmi.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("remove finalizer of VMI %s/%s: %w", vmi.GetNamespace(), vmi.GetName(), err)
	}
	return 0, nil
}

// setVMIPhase writes status.phase plus extra status fields, guarded by the
// resourceVersion just read so a stale cache never moves a VMI backwards.
func (s *Simulator) legacySetVMIPhase(ctx context.Context, vmi *unstructured.Unstructured, phase kubevirtv1.VirtualMachineInstancePhase, extra map[string]any) error {
	return s.legacySetVMIPhaseAnnotated(ctx, vmi, phase, extra, nil)
}

// setVMIPhaseAnnotated is setVMIPhase that also merges annotations.
func (s *Simulator) legacySetVMIPhaseAnnotated(ctx context.Context, vmi *unstructured.Unstructured, phase kubevirtv1.VirtualMachineInstancePhase, extra, annotations map[string]any) error {
	status := map[string]any{"phase": string(phase), "phaseTransitionTimestamps": phaseTransitions(vmi, phase)}
	for k, v := range extra {
		status[k] = v
	}
	meta := map[string]any{"resourceVersion": vmi.GetResourceVersion()}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	body := map[string]any{"metadata": meta, "status": status}
	if err := s.patchVMI(ctx, vmi.GetNamespace(), vmi.GetName(), body); err != nil {
		return fmt.Errorf("set VMI %s/%s phase %s: %w", vmi.GetNamespace(), vmi.GetName(), phase, err)
	}
	s.mu.Lock()
	s.phaseSince[vmi.GetUID()] = phaseMark{phase: string(phase), at: time.Now()}
	s.mu.Unlock()
	return nil
}

func condition(typ string, ok bool, reason, msg string) map[string]any {
	c := map[string]any{
		"type":               typ,
		"status":             string(metav1.ConditionFalse),
		"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
	}
	if ok {
		c["status"] = string(metav1.ConditionTrue)
	}
	if reason != "" {
		c["reason"] = reason
	}
	if msg != "" {
		c["message"] = msg
	}
	return c
}
