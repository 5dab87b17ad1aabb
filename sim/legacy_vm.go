// This file is part of the legacy VM controller (Options.LegacyVMController):
// the simulator's own imitation of virt-controller, kept ONLY for the suites
// not yet migrated to KubeVirt's real virt-controller (listed in
// docs/testing-kubevirt.md). New tests use testcluster.Options.VirtController.

package sim

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// AnnotationTemplateHash, on a VMI the simulator created, is the digest of
// the VM template spec it was started from; RestartRequired compares it.
const AnnotationTemplateHash = "sim.redfish-bridge.io/template-spec-sha256"

// RunStrategy returns the VM's effective run strategy: spec.runStrategy,
// else the deprecated spec.running, else Halted.
func RunStrategy(vm *unstructured.Unstructured) kubevirtv1.VirtualMachineRunStrategy {
	if rs, _, _ := unstructured.NestedString(vm.Object, "spec", "runStrategy"); rs != "" {
		return kubevirtv1.VirtualMachineRunStrategy(rs)
	}
	if running, found, _ := unstructured.NestedBool(vm.Object, "spec", "running"); found && running {
		return kubevirtv1.RunStrategyAlways
	}
	return kubevirtv1.RunStrategyHalted
}

// syncVM plays virt-controller's VM loop: make the VMI follow the run
// strategy, then write the VM status.
func (s *Simulator) legacySyncVM(ctx context.Context, k string) (time.Duration, error) {
	vm := s.getU(k, vmInformer)
	vmi := s.getU(k, vmiInformer)
	if vm == nil {
		// Play the garbage collector: the VM is gone, so is its VMI.
		if vmi != nil && ownerUID(vmi) != "" && vmi.GetDeletionTimestamp() == nil {
			return 0, s.legacyDeleteVMI(ctx, vmi, "VM deleted")
		}
		return 0, nil
	}
	if vmi != nil && ownerUID(vmi) != "" && ownerUID(vmi) != vm.GetUID() {
		// Left over from an earlier VM of the same name.
		if vmi.GetDeletionTimestamp() == nil {
			return 0, s.legacyDeleteVMI(ctx, vmi, "owner VM replaced")
		}
		vmi = nil
	}
	s.checkCorruption(ctx, vm)
	after, err := s.syncRunStrategy(ctx, vm, vmi)
	if err != nil {
		return 0, err
	}
	if err := s.syncVMStatus(ctx, vm, vmi); err != nil {
		return 0, err
	}
	return after, nil
}

// syncRunStrategy makes the VMI follow the run strategy the way
// virt-controller v1.9 does (pkg/virt-controller/watch/vm, syncRunStrategy),
// including status.stateChangeRequests (virt-api's start/stop/restart) and
// status.runStrategy (the strategy last recorded):
//
//   - Always: no VMI -> start; a Stop request for the VMI, or a final VMI ->
//     delete it (a Failed one after the crash loop backoff); it restarts.
//   - RerunOnFailure: a Stop request for the VMI, or a final VMI -> delete
//     it; only a Failed one is followed by a Start request. Without a VMI it
//     starts ONLY on a Start request or when the run strategy just changed
//     (status.runStrategy differs): a VMI whose guest shut down, or that
//     was deleted, is not replaced.
//   - Manual: only Start and Stop requests act.
//   - Halted: any VMI is deleted; a Start request without a VMI turns the
//     strategy into Always.
//   - Once: no VMI -> start, never again.
func (s *Simulator) syncRunStrategy(ctx context.Context, vm, vmi *unstructured.Unstructured) (time.Duration, error) {
	if vm.GetDeletionTimestamp() != nil {
		if vmi != nil && vmi.GetDeletionTimestamp() == nil {
			return 0, s.legacyDeleteVMI(ctx, vmi, "VM terminating")
		}
		return 0, nil
	}
	phase := vmiPhase(vmi)
	deleting := vmi != nil && vmi.GetDeletionTimestamp() != nil
	stop := hasStopRequestFor(vm, vmi)
	strategy := RunStrategy(vm)
	switch strategy {
	case kubevirtv1.RunStrategyAlways:
		switch {
		case vmi == nil:
			return 0, s.legacyCreateVMI(ctx, vm)
		case deleting:
		case stop:
			return 0, s.legacyDeleteVMI(ctx, vmi, "stop request, runStrategy Always")
		case phase == kubevirtv1.Succeeded:
			return 0, s.legacyDeleteVMI(ctx, vmi, "guest stopped, runStrategy Always")
		case phase == kubevirtv1.Failed:
			return s.restartFailed(ctx, vmi)
		}
	case kubevirtv1.RunStrategyRerunOnFailure:
		if vmi != nil {
			switch {
			case deleting:
			case stop:
				return 0, s.legacyDeleteVMI(ctx, vmi, "stop request, runStrategy RerunOnFailure")
			case phase == kubevirtv1.Succeeded:
				return 0, s.legacyDeleteVMI(ctx, vmi, "guest stopped, runStrategy RerunOnFailure: stays off")
			case phase == kubevirtv1.Failed:
				// virt-controller deletes it and asks for a start; the
				// request goes first here, so a retry never loses it.
				if wait := s.crashLoopBackoff() - s.inPhaseFor(vmi); wait > 0 {
					return wait, nil
				}
				if !hasStartRequest(vm) {
					return 0, s.addStartRequest(ctx, vm)
				}
				return 0, s.legacyDeleteVMI(ctx, vmi, "failed, rerun")
			}
			return 0, nil
		}
		recorded, _, _ := unstructured.NestedString(vm.Object, "status", "runStrategy")
		if hasStartRequest(vm) || recorded != string(strategy) {
			return 0, s.legacyCreateVMI(ctx, vm)
		}
	case kubevirtv1.RunStrategyManual:
		switch {
		case vmi == nil && hasStartRequest(vm):
			return 0, s.legacyCreateVMI(ctx, vm)
		case vmi != nil && !deleting && stop:
			return 0, s.legacyDeleteVMI(ctx, vmi, "stop request, runStrategy Manual")
		}
	case kubevirtv1.RunStrategyOnce:
		if vmi == nil {
			return 0, s.legacyCreateVMI(ctx, vm)
		}
	case kubevirtv1.RunStrategyHalted:
		switch {
		case vmi == nil && hasStartRequest(vm):
			return 0, s.startHalted(ctx, vm)
		case vmi != nil && !deleting:
			return 0, s.legacyDeleteVMI(ctx, vmi, "runStrategy Halted")
		}
	}
	// Unknown strategies: no automatic action.
	return 0, nil
}

// restartFailed deletes a Failed VMI once it has been Failed for the crash
// loop backoff (the VM then recreates it), else asks to be called back.
func (s *Simulator) restartFailed(ctx context.Context, vmi *unstructured.Unstructured) (time.Duration, error) {
	if wait := s.crashLoopBackoff() - s.inPhaseFor(vmi); wait > 0 {
		return wait, nil
	}
	return 0, s.legacyDeleteVMI(ctx, vmi, "failed, restarting")
}

func (s *Simulator) legacyCreateVMI(ctx context.Context, vm *unstructured.Unstructured) error {
	vmi, err := BuildVMI(vm)
	if err != nil {
		return err
	}
	_, err = s.dyn.Resource(VMIResource).Namespace(vm.GetNamespace()).Create(ctx, vmi, metav1.CreateOptions{FieldManager: "virt-controller"})
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil // the cache is behind; the VMI's events requeue the VM
	case err != nil:
		return fmt.Errorf("create VMI %s/%s: %w", vm.GetNamespace(), vm.GetName(), err)
	}
	s.log.InfoContext(ctx, "VMI created", "vm", vm.GetNamespace()+"/"+vm.GetName(), "runStrategy", RunStrategy(vm))
	return nil
}

func (s *Simulator) legacyDeleteVMI(ctx context.Context, vmi *unstructured.Unstructured, why string) error {
	uid := vmi.GetUID()
	err := s.dyn.Resource(VMIResource).Namespace(vmi.GetNamespace()).Delete(ctx, vmi.GetName(), metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid},
	})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil // already gone or replaced
	case err != nil:
		return fmt.Errorf("delete VMI %s/%s: %w", vmi.GetNamespace(), vmi.GetName(), err)
	}
	s.log.InfoContext(ctx, "VMI deleted", "vmi", vmi.GetNamespace()+"/"+vmi.GetName(), "uid", uid, "why", why)
	return nil
}

// BuildVMI returns the VMI virt-controller would create for vm: the
// template's labels, annotations and spec, a firmware UUID, an owner
// reference to the VM and the simulator's stop finalizer.
func BuildVMI(vm *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	spec, found, err := unstructured.NestedMap(vm.Object, "spec", "template", "spec")
	if err != nil || !found {
		return nil, fmt.Errorf("VM %s/%s: no spec.template.spec (err %v)", vm.GetNamespace(), vm.GetName(), err)
	}
	hash, err := specHash(spec)
	if err != nil {
		return nil, err
	}
	labels, _, _ := unstructured.NestedStringMap(vm.Object, "spec", "template", "metadata", "labels")
	annotations, _, _ := unstructured.NestedStringMap(vm.Object, "spec", "template", "metadata", "annotations")
	if labels == nil {
		labels = map[string]string{}
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	labels[kubevirtv1.DeprecatedVirtualMachineNameLabel] = vm.GetName()
	labels[kubevirtv1.CreatedByLabel] = string(vm.GetUID())
	annotations[AnnotationTemplateHash] = hash
	if id, _, _ := unstructured.NestedString(spec, "domain", "firmware", "uuid"); id == "" {
		if err := unstructured.SetNestedField(spec, FirmwareUUID(vm.GetNamespace(), vm.GetName()), "domain", "firmware", "uuid"); err != nil {
			return nil, fmt.Errorf("VM %s/%s: set firmware uuid: %w", vm.GetNamespace(), vm.GetName(), err)
		}
	}
	vmi := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	vmi.SetAPIVersion("kubevirt.io/v1")
	vmi.SetKind("VirtualMachineInstance")
	vmi.SetNamespace(vm.GetNamespace())
	vmi.SetName(vm.GetName())
	vmi.SetLabels(labels)
	vmi.SetAnnotations(annotations)
	vmi.SetFinalizers([]string{kubevirtv1.VirtualMachineInstanceFinalizer})
	vmi.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine",
		Name: vm.GetName(), UID: vm.GetUID(),
		Controller: new(true), BlockOwnerDeletion: new(true),
	}})
	return vmi, nil
}

// ownerUID is the UID of the VM controlling vmi, "" if none.
func ownerUID(vmi *unstructured.Unstructured) types.UID {
	for _, o := range vmi.GetOwnerReferences() {
		if o.Kind == "VirtualMachine" && o.Controller != nil && *o.Controller {
			return o.UID
		}
	}
	return ""
}

func vmiPhase(vmi *unstructured.Unstructured) kubevirtv1.VirtualMachineInstancePhase {
	if vmi == nil {
		return kubevirtv1.VmPhaseUnset
	}
	p, _, _ := unstructured.NestedString(vmi.Object, "status", "phase")
	return kubevirtv1.VirtualMachineInstancePhase(p)
}

func final(p kubevirtv1.VirtualMachineInstancePhase) bool {
	return p == kubevirtv1.Succeeded || p == kubevirtv1.Failed
}
