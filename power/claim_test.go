package power

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/health"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestOnWithMissingClaim: a Ready virtual-media slot whose PVC is gone
// (deleted while the VM was off). KubeVirt's virt-controller creates the
// VMI but no virt-launcher pod for it: the VMI stays Pending, the VM's
// printableStatus is ErrorPvcNotFound. Redfish shows PowerState
// PoweringOn and Status.Health Critical (not a silent PoweringOn). Once
// the PVC is back, virt-controller starts the VM by itself and Health is
// OK again.
func TestOnWithMissingClaim(t *testing.T) {
	eachVariant(t, func(t *testing.T, _ crds.Variant, c *testcluster.Cluster) {
		e := startEnv(t, c)
		ctx := t.Context()
		key := e.createVM(t, "noclaim")
		gone := system.MediaSlot{Slot: "cd0", Image: "http://x/boot.iso", Phase: system.MediaReady, InsertID: "i1", ClaimName: "gone"}
		if _, err := e.w.Media(ctx, key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
			slots[gone.Slot] = gone // no PVC: what setSlot would create
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
			t.Fatal(err)
		}
		vm := e.eventually(t, key, "virt-controller reports the missing PVC", func(vm *apply.VM) bool {
			return kubevirt.PrintableStatusOf(vm.Object) == kubevirtv1.VirtualMachineStatusPvcNotFound
		})
		if st := State(vm); st != system.PowerPoweringOn {
			t.Errorf("PowerState %s with the CD-ROM's PVC missing, want PoweringOn", st)
		}
		if ph := kubevirt.PhaseOf(vm.VMI); ph != kubevirt.PhasePending {
			t.Errorf("VMI phase %s with the CD-ROM's PVC missing, want Pending", ph)
		}
		if c := kubevirt.VMIConditionOf(vm.VMI, string(kubevirtv1.VirtualMachineInstanceSynchronized)); c.Status != "False" || c.Reason != "FailedPvcNotFound" {
			t.Errorf("VMI condition Synchronized %+v, want False, FailedPvcNotFound", c)
		}
		conds, _, _ := unstructured.NestedSlice(vm.VMI.Object, "status", "conditions")
		t.Logf("VMI conditions with the PVC missing: %v", conds)
		pods, err := e.kube.CoreV1().Pods(key.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sim.LauncherSelector})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 0 {
			t.Errorf("%d virt-launcher pods for a VMI whose PVC is missing, want none", len(pods.Items))
		}
		if h := health.Of(vm); h != system.HealthCritical {
			t.Errorf("Health %s with printableStatus %s, want Critical", h, kubevirt.PrintableStatusOf(vm.Object))
		}
		if err := e.createClaim(ctx, key.Namespace, gone.ClaimName); err != nil {
			t.Fatal(err)
		}
		vm = e.eventually(t, key, "running once the PVC is back", func(vm *apply.VM) bool {
			return State(vm) == system.PowerOn && kubevirt.PrintableStatusOf(vm.Object) == kubevirtv1.VirtualMachineStatusRunning
		})
		if h := health.Of(vm); h != system.HealthOK {
			t.Errorf("Health %s once running, want OK", h)
		}
	})
}
