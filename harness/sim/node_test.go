package sim_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestNodeSide runs VMs through KubeVirt's own virt-controller with the
// simulator as the node: launcher pods bound and run, VMIs handed over
// (Scheduled) started, guests that shut down or reboot, deleted VMIs
// stopped. The VM's status is virt-controller's throughout.
func TestNodeSide(t *testing.T) {
	e := start(t, crds.Stock, sim.Options{StartDelay: 20 * time.Millisecond, StopDelay: 20 * time.Millisecond})
	t.Run("Run", e.testRun)
	t.Run("GuestShutdownAlways", e.testGuestShutdownAlways)
	t.Run("GuestShutdownManual", e.testGuestShutdownManual)
	t.Run("GuestReboot", e.testGuestReboot)
	t.Run("Halt", e.testHalt)
	t.Run("LauncherDeleted", e.testLauncherDeleted)
	t.Run("PVCVolume", e.testPVCVolume)
}

// runningVM creates a VM with the run strategy and waits until it runs.
func (e *env) runningVM(t *testing.T, name, runStrategy string) (*unstructured.Unstructured, *unstructured.Unstructured) {
	t.Helper()
	e.createVM(t, newVM(e.ns, name, runStrategy))
	if runStrategy == "Manual" {
		e.requestStart(t, name)
	}
	vmi := e.vmiIs(t, name, "Running", "")
	vm := e.vmIs(t, name, "Running")
	return vm, vmi
}

// requestStart appends a Start request (what virt-api's start subresource
// does).
func (e *env) requestStart(t *testing.T, name string) {
	t.Helper()
	e.patchVMStatus(t, name, `{"status":{"stateChangeRequests":[{"action":"Start"}]}}`)
}

func (e *env) testRun(t *testing.T) {
	vm, vmi := e.runningVM(t, "run", "Always")
	// status.ready follows the VMI's Ready condition, which virt-controller
	// copies from the launcher pod's once the VMI runs.
	eventually(t, "VM ready", func(ctx context.Context) error {
		got, err := e.getVM(ctx, "run")
		if err != nil {
			return err
		}
		if ready, _, _ := unstructured.NestedBool(got.Object, "status", "ready"); !ready {
			return fmt.Errorf("status.ready false; conditions %v", got.Object["status"].(map[string]any)["conditions"])
		}
		return nil
	})
	if !slices.Contains(transitions(vmi), "Running") {
		t.Errorf("VMI phaseTransitionTimestamps %v: no Running entry", transitions(vmi))
	}
	if node := str(vmi, "status", "nodeName"); node != sim.NodeName {
		t.Errorf("VMI status.nodeName %q, want %q", node, sim.NodeName)
	}
	pod := e.launcherPod(t, vmi)
	if pod.Spec.NodeName != sim.NodeName || pod.Status.Phase != corev1.PodRunning {
		t.Errorf("launcher pod %s on %q in phase %s, want Running on %s", pod.Name, pod.Spec.NodeName, pod.Status.Phase, sim.NodeName)
	}
	// virt-controller writes the VM's spec: its first sync PUTs the typed
	// VM back (the api-version annotations), which serializes the struct
	// domain.resources as {}; it then persists a firmware UUID. Both are
	// owned by its field manager (operation Update).
	// The bridge shows that UUID from the VM's creation on
	// (kubevirt.FirmwareUUIDOf), so it must be the one virt-controller
	// derives.
	if uuid := str(vm, "spec", "template", "spec", "domain", "firmware", "uuid"); uuid != kubevirt.LegacyFirmwareUUID(vm.GetName()) {
		t.Errorf("VM firmware uuid persisted by virt-controller %q, want kubevirt.LegacyFirmwareUUID %q", uuid, kubevirt.LegacyFirmwareUUID(vm.GetName()))
	}
	if _, found, _ := unstructured.NestedMap(vm.Object, "spec", "template", "spec", "domain", "resources"); !found {
		t.Errorf("VM has no domain.resources written by virt-controller")
	}
	var owned string
	for _, mf := range vm.GetManagedFields() {
		if mf.Manager == kubevirt.ControllerFieldManager && mf.Subresource == "" && mf.FieldsV1 != nil {
			owned += mf.FieldsV1.String()
		}
	}
	for _, f := range []string{`"f:resources":{}`, `"f:uuid":{}`, `"f:kubevirt.io/latest-observed-api-version":{}`} {
		if !strings.Contains(owned, f) {
			t.Errorf("virt-controller's managedFields lack %s: %s", f, owned)
		}
	}
	if got := e.sim.Counters().VMIsStarted; got < 1 {
		t.Errorf("VMIsStarted %d, want >= 1", got)
	}
}

func (e *env) testGuestShutdownAlways(t *testing.T) {
	_, first := e.runningVM(t, "shutdown-always", "Always")
	if err := e.sim.GuestShutdown(t.Context(), system.Key{Namespace: e.ns, Name: "shutdown-always"}); err != nil {
		t.Fatal(err)
	}
	// Always: virt-controller replaces the Succeeded VMI.
	e.vmiIs(t, "shutdown-always", "Running", first.GetUID())
	vm := e.vmIs(t, "shutdown-always", "Running")
	if sf, found, _ := unstructured.NestedMap(vm.Object, "status", "startFailure"); found {
		t.Errorf("a guest shutdown counted as a start failure: %v", sf)
	}
}

func (e *env) testGuestShutdownManual(t *testing.T) {
	e.runningVM(t, "shutdown-manual", "Manual")
	if err := e.sim.GuestShutdown(t.Context(), system.Key{Namespace: e.ns, Name: "shutdown-manual"}); err != nil {
		t.Fatal(err)
	}
	e.vmIs(t, "shutdown-manual", "Stopped")
	vmi, err := e.getVMI(t.Context(), "shutdown-manual")
	if err == nil && str(vmi, "status", "phase") != "Succeeded" {
		t.Errorf("Manual: VMI after a guest shutdown in phase %q, want Succeeded (kept) or gone", str(vmi, "status", "phase"))
	}
}

func (e *env) testGuestReboot(t *testing.T) {
	_, vmi := e.runningVM(t, "reboot", "Always")
	if err := e.sim.GuestReboot(t.Context(), system.Key{Namespace: e.ns, Name: "reboot"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a second boot in place", func(ctx context.Context) error {
		got, err := e.getVMI(ctx, "reboot")
		if err != nil {
			return err
		}
		if got.GetUID() != vmi.GetUID() || len(sim.Boots(got)) != 2 {
			return fmt.Errorf("VMI %s boots %v", got.GetUID(), sim.Boots(got))
		}
		return nil
	})
}

func (e *env) testHalt(t *testing.T) {
	_, vmi := e.runningVM(t, "halt", "Always")
	e.patchVM(t, "halt", `{"spec":{"runStrategy":"Halted"}}`)
	e.vmiGone(t, "halt")
	e.vmIs(t, "halt", "Stopped")
	eventually(t, "launcher pod gone", func(ctx context.Context) error {
		pods, err := e.kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "kubevirt.io/created-by=" + string(vmi.GetUID())})
		if err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("launcher pod %s still there (phase %s)", pods.Items[0].Name, pods.Items[0].Status.Phase)
		}
		return nil
	})
}

// testLauncherDeleted: the deleted launcher pod of a running VMI whose
// deletion the simulator has not seen (what its VMI informer shows a
// moment after virt-controller deleted the pod of a VMI being deleted, on a
// loaded machine) is held for the guest's stop, as the kubelet and
// virt-launcher do, not confirmed at once: confirmed at once, virt-controller
// failed the Running VMI without a pod, and a guest with an hour's grace
// was gone within a second (TestForce's control in package power).
func (e *env) testLauncherDeleted(t *testing.T) {
	_, vmi := e.runningVM(t, "launcher-deleted", "Always")
	pod := e.launcherPod(t, vmi)
	before := e.sim.Counters().LaunchersHeld
	if err := e.kube.CoreV1().Pods(e.ns).Delete(t.Context(), pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "launcher pod "+pod.Name+" gone", func(ctx context.Context) error {
		got, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case got.UID != pod.UID:
			return nil
		}
		return fmt.Errorf("still there (deletionTimestamp %v)", got.DeletionTimestamp)
	})
	if after := e.sim.Counters().LaunchersHeld; after <= before {
		t.Errorf("the deleted launcher pod of a running VMI was confirmed without waiting for its guest's stop (LaunchersHeld %d, then %d)", before, after)
	}
}

// launcherPod returns the virt-launcher pod of a VMI.
func (e *env) launcherPod(t *testing.T, vmi *unstructured.Unstructured) corev1.Pod {
	t.Helper()
	pods, err := e.kube.CoreV1().Pods(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "kubevirt.io/created-by=" + string(vmi.GetUID())})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("%d launcher pods for VMI %s, want 1", len(pods.Items), vmi.GetName())
	}
	return pods.Items[0]
}

// transitions lists the phases of a VMI's phaseTransitionTimestamps.
func transitions(vmi *unstructured.Unstructured) []string {
	list, _, _ := unstructured.NestedSlice(vmi.Object, "status", "phaseTransitionTimestamps")
	var out []string
	for _, e := range list {
		m, _ := e.(map[string]any)
		p, _ := m["phase"].(string)
		out = append(out, p)
	}
	return out
}

// TestRefusesWithoutVirtController: on a cluster where no virt-controller
// leads, Run fails at once instead of leaving VMs that never start (the
// simulator has no VM controller of its own to fall back on). Were it to
// run, it would run until its context ends and return nil: the bound below
// turns that into a failure, not a hang.
func TestRefusesWithoutVirtController(t *testing.T) {
	c := testcluster.ForTest(t, crds.Stock)
	s, err := sim.New(c.Admin, sim.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err = s.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "no virt-controller") {
		t.Fatalf("Run without virt-controller: %v, want a refusal", err)
	}
}

func (e *env) testPVCVolume(t *testing.T) {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Create(t.Context(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vm := newVM(e.ns, "pvc", "Always")
	spec := vm.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	devices := spec["domain"].(map[string]any)["devices"].(map[string]any)
	devices["disks"] = []any{
		map[string]any{"name": "rootdisk", "disk": map[string]any{"bus": "virtio"}, "bootOrder": int64(2)},
		map[string]any{"name": "data", "cdrom": map[string]any{"bus": "sata", "readonly": true}, "bootOrder": int64(1)},
	}
	spec["domain"].(map[string]any)["rebootPolicy"] = "Terminate"
	spec["volumes"] = append(spec["volumes"].([]any), map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "data"}})
	e.createVM(t, vm)
	defer func() {
		if t.Failed() {
			vmi, _ := e.getVMI(t.Context(), "pvc")
			if vmi != nil {
				t.Logf("VMI status: %v", vmi.Object["status"])
			}
			pods, _ := e.kube.CoreV1().Pods(e.ns).List(t.Context(), metav1.ListOptions{})
			for _, p := range pods.Items {
				t.Logf("pod %s node %q phase %s conditions %v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
			}
		}
	}()
	e.vmiIs(t, "pvc", "Running", "")
}
