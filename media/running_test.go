package media_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// testInsertIntoRunningVM pins what an insert into a running VM does with
// KubeVirt v1.9.0's real virt-controller (docs/operations.md, Virtual
// media slots): the CD-ROM disk and its plain PVC volume go into the VM's
// spec as for a stopped VM, virt-controller does not hotplug them (its
// declarative hotplug takes only volumes marked hotpluggable) and sets
// the VM's RestartRequired condition; the running VMI, the same one, has
// no media volume: the guest sees the CD only at its next start.
func testInsertIntoRunningVM(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	body := fmt.Sprintf(`{"spec":{"runStrategy":%q}}`, kubevirt.RunStrategyAlways)
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Patch(t.Context(), key.Name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		t.Fatalf("start VM %s: %v", key, err)
	}
	running := e.runningVMI(t, key)
	_, stop := e.startReconciler(t, nil)
	defer stop()
	url, _ := e.img.add("/running.iso", 1<<20, false)
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
	vmi := vmcheck.MustVMI(t, e.admin, key)
	if vmi == nil || vmi.GetUID() != running.GetUID() {
		t.Fatalf("VMI after the insert %v, want the running one %s", vmi, running.GetUID())
	}
	spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
	if claim, ok := vmcheck.Volumes(spec)[apply.DiskName(slot)]; ok {
		t.Errorf("running VMI %s has volume %s (claim %q): KubeVirt hotplugged a plain PVC volume", vmi.GetUID(), apply.DiskName(slot), claim)
	}
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
