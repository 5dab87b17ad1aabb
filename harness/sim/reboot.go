package sim

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// AnnotationBoots is on a VMI the simulator runs: it lists what its domain
// booted, one device name a boot, comma-separated: the first when the VMI
// reached Running, one more for each in-place guest reboot
// ([Simulator.GuestReboot] under rebootPolicy Reboot).
const AnnotationBoots = "sim.redfish-bridge.io/boots"

// BootDevice is the device a VMI spec's firmware boots: the disk or
// interface with the lowest bootOrder; without any bootOrder, the first
// disk (what libvirt does with KubeVirt's domain).
func BootDevice(spec map[string]any) string {
	best, bestOrder := "", int64(0)
	for _, kind := range []string{"disks", "interfaces"} {
		list, _, _ := unstructured.NestedSlice(spec, "domain", "devices", kind)
		for _, e := range list {
			m, _ := e.(map[string]any)
			name, _, _ := unstructured.NestedString(m, "name")
			if n, _, _ := unstructured.NestedInt64(m, "bootOrder"); n > 0 && (bestOrder == 0 || n < bestOrder) {
				best, bestOrder = name, n
			}
		}
	}
	if best != "" {
		return best
	}
	disks, _, _ := unstructured.NestedSlice(spec, "domain", "devices", "disks")
	if len(disks) > 0 {
		m, _ := disks[0].(map[string]any)
		best, _, _ = unstructured.NestedString(m, "name")
	}
	return best
}

// Boots returns what a VMI booted, in order ([AnnotationBoots]).
func Boots(vmi *unstructured.Unstructured) []string {
	v := vmi.GetAnnotations()[AnnotationBoots]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// bootsAfterOne more boot of the VMI's own spec.
func bootsAfterOne(vmi *unstructured.Unstructured) map[string]any {
	spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
	boots := append(Boots(vmi), BootDevice(spec))
	return map[string]any{AnnotationBoots: strings.Join(boots, ",")}
}

// GuestReboot makes the guest of VM key reboot itself, as KubeVirt v1.9
// handles it (VMI spec.domain.rebootPolicy, mapped to libvirt's on_reboot by
// virt-launcher's RebootPolicyDomainConfigurator):
//
//   - Reboot (the default): the domain restarts in place; the VMI keeps
//     running, unchanged, and its firmware reads the boot order the VMI was
//     started with again (recorded in [AnnotationBoots]);
//   - Terminate: on_reboot destroy: libvirt stops the domain with reason
//     Shutdown, and virt-handler (calculateVmPhaseForStatusReason) turns the
//     VMI Succeeded, exactly as for a guest shutdown. What follows is the
//     run strategy's (Always restarts it, RerunOnFailure and Manual do not).
func (s *Simulator) GuestReboot(ctx context.Context, key system.Key) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vmi, err := s.dyn.Resource(VMIResource).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("guest reboot of %s: %w", key, err)
		}
		if p := kubevirt.PhaseOf(vmi); p != kubevirt.PhaseRunning || vmi.GetDeletionTimestamp() != nil {
			return fmt.Errorf("guest reboot of %s: VMI %s, not running", key, p)
		}
		policy, _, _ := unstructured.NestedString(vmi.Object, "spec", "domain", "rebootPolicy")
		if policy == kubevirt.RebootPolicyTerminate {
			return s.setVMIPhase(ctx, vmi, kubevirt.PhaseSucceeded, nil, nil)
		}
		body := map[string]any{
			"metadata": map[string]any{"resourceVersion": vmi.GetResourceVersion(), "annotations": bootsAfterOne(vmi)},
		}
		if err := s.patchVMI(ctx, key.Namespace, key.Name, body); err != nil {
			return fmt.Errorf("guest reboot of %s: %w", key, err)
		}
		return nil
	})
}
