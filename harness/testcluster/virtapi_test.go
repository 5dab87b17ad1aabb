package testcluster_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestVirtAPI runs KubeVirt's virt-api next to virt-controller
// (Options.VirtAPI) on each CRD variant: its webhooks, not the admission
// policy, reject a disk without a volume; its mutator defaults a new VM;
// it reverts VMI status writes by identities that are not KubeVirt's; and
// its aggregated API serves the stop subresource through kube-apiserver,
// also after a restart.
func TestVirtAPI(t *testing.T) {
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			c := testcluster.ForTestWith(t, testcluster.Options{Variant: v, VirtAPI: true})
			ns := c.TestNamespace(t)
			dyn := dynamic.NewForConfigOrDie(c.Admin)
			vms := dyn.Resource(testcluster.VirtualMachines).Namespace(ns)
			t.Run("disk without volume", func(t *testing.T) { testVirtAPIDiskWithoutVolume(t, vms) })
			t.Run("defaults of a new VM", func(t *testing.T) { testVirtAPIDefaults(t, vms) })
			t.Run("VMI status writers", func(t *testing.T) { testVMIStatusWriters(t, c, ns) })
			t.Run("stop subresource", func(t *testing.T) { testSubresourceStop(t, c, ns, vms) })
			t.Run("restarted", func(t *testing.T) { testVirtAPIRestarted(t, c, vms) })
		})
	}
}

// runnableVM is vmBody with what virt-api requires of any VM: a run
// strategy, memory, a pod network for its interface.
func runnableVM(name string, disks, volumes []any) *unstructured.Unstructured {
	vm := vmBody(name, disks, []any{iface("default", 0)}, volumes)
	spec := vm.Object["spec"].(map[string]any)
	spec["runStrategy"] = "Halted"
	tmpl := spec["template"].(map[string]any)["spec"].(map[string]any)
	tmpl["domain"].(map[string]any)["memory"] = map[string]any{"guest": "1Gi"}
	tmpl["networks"] = []any{map[string]any{"name": "default", "pod": map[string]any{}}}
	return vm
}

func testVirtAPIDiskWithoutVolume(t *testing.T, vms dynamic.ResourceInterface) {
	_, err := apply(t, vms, runnableVM("lost-volume", []any{disk("rootdisk", 0), disk("data", 0)}, []any{pvcVolume("rootdisk")}), author, false)
	checkVirtAPIDenial(t, err, testcluster.MsgVirtAPIDiskWithoutVolume(1, "data"))
	// An update that drops a disk's volume (omission deletes in SSA).
	if _, err := apply(t, vms, runnableVM("update", []any{disk("rootdisk", 0)}, []any{pvcVolume("rootdisk")}), author, false); err != nil {
		t.Fatal(err)
	}
	_, err = apply(t, vms, runnableVM("update", []any{disk("rootdisk", 0)}, []any{}), author, false)
	checkVirtAPIDenial(t, err, testcluster.MsgVirtAPIDiskWithoutVolume(0, "rootdisk"))
}

func checkVirtAPIDenial(t *testing.T, err error, wantMsg string) {
	t.Helper()
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `admission webhook "`+testcluster.VirtAPIWebhookVM+`" denied the request`) ||
		!strings.Contains(err.Error(), wantMsg) {
		t.Errorf("err = %v, want 422 from virt-api's %s with %q", err, testcluster.VirtAPIWebhookVM, wantMsg)
	}
	if err != nil && strings.Contains(err.Error(), testcluster.PolicyName) {
		t.Errorf("err = %v: the admission policy is installed next to virt-api", err)
	}
}

// testVirtAPIDefaults: virt-api's mutator fills architecture, machine type
// and a firmware UUID and serial into a new VM, and the apiserver records
// no field manager for them (not even the creator's).
func testVirtAPIDefaults(t *testing.T, vms dynamic.ResourceInterface) {
	vm, err := apply(t, vms, runnableVM("defaults", []any{disk("rootdisk", 0)}, []any{pvcVolume("rootdisk")}), author, false)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := []string{"spec", "template", "spec"}
	for _, f := range []struct {
		path []string
		want string // "" means any non-empty value
	}{
		{append(tmpl, "architecture"), "amd64"},
		{append(tmpl, "domain", "machine", "type"), "q35"},
		{append(tmpl, "domain", "firmware", "uuid"), ""},
		{append(tmpl, "domain", "firmware", "serial"), ""},
	} {
		got, _, _ := unstructured.NestedString(vm.Object, f.path...)
		if got == "" || (f.want != "" && got != f.want) {
			t.Errorf("%s = %q, want %q (virt-api's default)", strings.Join(f.path, "."), got, f.want)
		}
	}
	for _, mf := range vm.GetManagedFields() {
		for _, f := range []string{`"f:architecture"`, `"f:machine"`, `"f:firmware"`} {
			if strings.Contains(mf.FieldsV1.String(), f) {
				t.Errorf("manager %s (%s) owns %s, want the webhook's defaults unowned", mf.Manager, mf.Operation, f)
			}
		}
	}
}

// testVMIStatusWriters: virt-api's VMI mutator silently reverts a status
// change by anyone but KubeVirt's service accounts (the write answers 200),
// so virt-controller and the node side must run as those (a VMI stayed
// Pending while virt-controller ran as the admin).
func testVMIStatusWriters(t *testing.T, c *testcluster.Cluster, ns string) {
	ctx := t.Context()
	vmi := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
		"metadata": map[string]any{"name": "status-writers"},
		"spec": map[string]any{
			"domain":   map[string]any{"memory": map[string]any{"guest": "1Gi"}, "devices": map[string]any{}},
			"networks": []any{},
		},
	}}
	admin := dynamic.NewForConfigOrDie(c.Admin).Resource(testcluster.VirtualMachineInstances).Namespace(ns)
	if _, err := admin.Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := func(client dynamic.ResourceInterface, reason string) string {
		t.Helper()
		body := []byte(`{"status":{"reason":"` + reason + `"}}`)
		got, err := client.Patch(ctx, "status-writers", types.MergePatchType, body, metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("patch VMI status as %s: %v", reason, err)
		}
		r, _, _ := unstructured.NestedString(got.Object, "status", "reason")
		return r
	}
	if got := patch(admin, "admin"); got == "admin" {
		t.Errorf("the admin's VMI status write landed (reason %q); want it reverted by virt-api", got)
	}
	asController := rest.CopyConfig(c.Admin)
	asController.Impersonate = rest.ImpersonationConfig{UserName: testcluster.VirtControllerUser, Groups: []string{"system:masters"}}
	controller := dynamic.NewForConfigOrDie(asController).Resource(testcluster.VirtualMachineInstances).Namespace(ns)
	if got := patch(controller, "controller"); got != "controller" {
		t.Errorf("virt-controller's VMI status write: reason %q, want it kept", got)
	}
}

// testVirtAPIRestarted: virt-api killed is started again on a new port and
// its webhooks and APIService point there: a disk without a volume is
// virt-api's denial again (while it is down every VM write fails:
// failurePolicy Fail), and a stop request for a VM that does not exist is
// virt-api's 404 (kube-apiserver answers 503 while it is away).
func testVirtAPIRestarted(t *testing.T, c *testcluster.Cluster, vms dynamic.ResourceInterface) {
	pid := c.VirtAPIPID()
	if pid == 0 {
		t.Fatal("no virt-api process")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	bad := runnableVM("after-restart", []any{disk("rootdisk", 0), disk("data", 0)}, []any{pvcVolume("rootdisk")})
	testutil.Eventually(t, "virt-api restarted and its webhooks registered", 3*time.Minute, 200*time.Millisecond, func(ctx context.Context) error {
		if n := c.VirtAPIRestarts(); n != 1 {
			return fmt.Errorf("%d restarts", n)
		}
		_, err := vms.Apply(ctx, bad.GetName(), bad, metav1.ApplyOptions{FieldManager: author, DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), testcluster.MsgVirtAPIDiskWithoutVolume(1, "data")) {
			return fmt.Errorf("dry-run apply: %w", err)
		}
		if err := putSubresource(ctx, c.Admin, "default", "no-such-vm", "stop", `{}`); !apierrors.IsNotFound(err) {
			return fmt.Errorf("PUT stop of a missing VM: %w, want virt-api's 404", err)
		}
		return nil
	})
	if got := c.VirtAPIPID(); got == pid || got == 0 {
		t.Errorf("virt-api pid %d after the restart (was %d)", got, pid)
	}
}
