package media_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// testInsertIntoRunningVM is the CD going into a running VM and out again
// without a restart, with KubeVirt v1.9.0's real virt-controller and its
// declarative volume hotplug (docs/behaviour.md, Virtual media slots):
// an insert and eject while the VM is stopped leave its CD-ROM drive in
// the template, empty; once it runs, an insert writes the volume
// hotpluggable, virt-controller adds it to the running VMI (the same one)
// and the simulator plays the node side (attachment pod, volumeStatus
// Ready); no RestartRequired. An eject removes the volume from the running
// VMI (virt-controller unplugs it, the simulator unmounts it), the drive
// stays, and the PVC and the attachment pod go.
func testInsertIntoRunningVM(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	_, stop := e.startReconciler(t, nil)
	defer stop()
	url, _ := e.img.add("/running.iso", 1<<20, false)
	// Stopped: the drive appears with the first image and stays on eject.
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url}); err != nil {
		t.Fatalf("Insert into the stopped VM: %v", err)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	if err := e.svc.Eject(t.Context(), key, slot); err != nil {
		t.Fatalf("Eject from the stopped VM: %v", err)
	}
	e.startVM(t, key)
	running := e.runningVMI(t, key)

	ins, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatalf("Insert into the running VM: %v", err)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if hot := hotpluggable(vm.Object, slot); !hot {
		t.Errorf("volume %s of the running VM is not hotpluggable", apply.DiskName(slot))
	}
	e.eventually(t, "volume "+apply.DiskName(slot)+" Ready in the running VMI", func(ctx context.Context) error {
		vmi := vmcheck.MustVMI(t, e.admin, key)
		if vmi == nil || vmi.GetUID() != running.GetUID() {
			return fmt.Errorf("VMI %v, want the running one %s", vmi, running.GetUID())
		}
		spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
		if claim := vmcheck.Volumes(spec)[apply.DiskName(slot)]; claim != ins.ClaimName {
			return fmt.Errorf("VMI volume %s claim %q, want %s", apply.DiskName(slot), claim, ins.ClaimName)
		}
		if p := vmcheck.VolumePhase(vmi, apply.DiskName(slot)); p != "Ready" {
			return fmt.Errorf("VMI volumeStatus %s phase %q, want Ready", apply.DiskName(slot), p)
		}
		return nil
	})
	e.noRestartRequired(t, key)

	if err := e.svc.Eject(t.Context(), key, slot); err != nil {
		t.Fatalf("Eject from the running VM: %v", err)
	}
	e.eventually(t, "volume "+apply.DiskName(slot)+" unplugged from the running VMI", func(ctx context.Context) error {
		vmi := vmcheck.MustVMI(t, e.admin, key)
		if vmi == nil || vmi.GetUID() != running.GetUID() {
			return fmt.Errorf("VMI %v, want the running one %s", vmi, running.GetUID())
		}
		spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
		if claim, ok := vmcheck.Volumes(spec)[apply.DiskName(slot)]; ok {
			return fmt.Errorf("VMI still has volume %s (claim %q)", apply.DiskName(slot), claim)
		}
		if p := vmcheck.VolumePhase(vmi, apply.DiskName(slot)); p != "" {
			return fmt.Errorf("VMI volumeStatus %s phase %q", apply.DiskName(slot), p)
		}
		left, err := vmcheck.MediaObjects(ctx, e.adminKube, key, slot)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("left behind: %v", left)
		}
		return nil
	})
	vm, err = e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if disk, volume, _ := mediaPair(vm, slot); !disk || volume {
		t.Errorf("after the eject: disk %v volume %v, want the empty drive", disk, volume)
	}
	e.noRestartRequired(t, key)
}

// testInsertIntoRunningVMWithoutDrive pins what an insert into a running VM
// that never had the slot's drive does (docs/behaviour.md): KubeVirt
// cannot hot-add a SATA CD-ROM, so the disk and a plain volume go into the
// VM's spec, virt-controller sets RestartRequired, and the running VMI,
// the same one, has no media volume: the guest sees the CD only at its
// next start.
func testInsertIntoRunningVMWithoutDrive(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	e.startVM(t, key)
	running := e.runningVMI(t, key)
	_, stop := e.startReconciler(t, nil)
	defer stop()
	url, _ := e.img.add("/running-nodrive.iso", 1<<20, false)
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url}); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	e.eventually(t, "VM condition RestartRequired True", func(ctx context.Context) error {
		vm, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := kubevirt.VMConditionOf(vm, kubevirt.ConditionRestartRequired); !c.True() {
			return fmt.Errorf("RestartRequired %+v", c)
		}
		return nil
	})
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if hotpluggable(vm.Object, slot) {
		t.Errorf("volume %s written hotpluggable without a drive to take it", apply.DiskName(slot))
	}
	vmi := vmcheck.MustVMI(t, e.admin, key)
	if vmi == nil || vmi.GetUID() != running.GetUID() {
		t.Fatalf("VMI after the insert %v, want the running one %s", vmi, running.GetUID())
	}
	spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
	if claim, ok := vmcheck.Volumes(spec)[apply.DiskName(slot)]; ok {
		t.Errorf("running VMI %s has volume %s (claim %q): KubeVirt hotplugged a plain PVC volume", vmi.GetUID(), apply.DiskName(slot), claim)
	}
}

// startVM sets the VM's runStrategy to Always, as its author would.
func (e *env) startVM(t *testing.T, key system.Key) {
	t.Helper()
	body := fmt.Sprintf(`{"spec":{"runStrategy":%q}}`, kubevirt.RunStrategyAlways)
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Patch(t.Context(), key.Name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		t.Fatalf("start VM %s: %v", key, err)
	}
}

// noRestartRequired fails t if the VM carries RestartRequired True.
func (e *env) noRestartRequired(t *testing.T, key system.Key) {
	t.Helper()
	vm, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Get(t.Context(), key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		t.Fatalf("VM %s gone", key)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c := kubevirt.VMConditionOf(vm, kubevirt.ConditionRestartRequired); c.True() {
		t.Errorf("VM %s RestartRequired: %+v", key, c)
	}
}

// hotpluggable reports whether the VM's volume of slot is marked
// hotpluggable.
func hotpluggable(vm *unstructured.Unstructured, slot string) bool {
	vols, _, _ := unstructured.NestedSlice(vm.Object, "spec", "template", "spec", "volumes")
	for _, v := range vols {
		if m, _ := v.(map[string]any); m["name"] == apply.DiskName(slot) {
			hot, _, _ := unstructured.NestedBool(m, "persistentVolumeClaim", "hotpluggable")
			return hot
		}
	}
	return false
}

// runningVMI waits for the VM's VMI to run and returns it.
func (e *env) runningVMI(t *testing.T, key system.Key) *unstructured.Unstructured {
	t.Helper()
	var vmi *unstructured.Unstructured
	e.eventually(t, "VMI of "+key.String()+" Running", func(context.Context) error {
		vmi = vmcheck.MustVMI(t, e.admin, key)
		if vmi == nil {
			return errors.New("no VMI")
		}
		if p := vmcheck.Phase(vmi); p != "Running" {
			return fmt.Errorf("VMI phase %q", p)
		}
		return nil
	})
	return vmi
}
