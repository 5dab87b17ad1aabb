package testcluster_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// vmBody is a minimal unstructured apply body for VirtualMachine name with
// the given template lists (nil lists are left out).
func vmBody(name string, disks, interfaces, volumes []any) *unstructured.Unstructured {
	devices := map[string]any{}
	if disks != nil {
		devices["disks"] = disks
	}
	if interfaces != nil {
		devices["interfaces"] = interfaces
	}
	spec := map[string]any{"domain": map[string]any{"devices": devices}}
	if volumes != nil {
		spec["volumes"] = volumes
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1",
		"kind":       "VirtualMachine",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"template": map[string]any{"spec": spec}},
	}}
}

func disk(name string, bootOrder int64) map[string]any {
	d := map[string]any{"name": name, "disk": map[string]any{"bus": "virtio"}}
	if bootOrder != 0 {
		d["bootOrder"] = bootOrder
	}
	return d
}

func cdrom(name, bus string) map[string]any {
	return map[string]any{"name": name, "cdrom": map[string]any{"bus": bus, "readonly": true}}
}

func pvcVolume(name string) map[string]any {
	return map[string]any{"name": name, "persistentVolumeClaim": map[string]any{"claimName": name + "-pvc"}}
}

func iface(name string, bootOrder int64) map[string]any {
	i := map[string]any{"name": name, "masquerade": map[string]any{}}
	if bootOrder != 0 {
		i["bootOrder"] = bootOrder
	}
	return i
}

// vmClient returns the admin's VirtualMachine client for a fresh namespace.
func vmClient(t *testing.T, c *testcluster.Cluster, ns string) dynamic.ResourceInterface {
	t.Helper()
	if err := c.CreateNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	return dyn.Resource(testcluster.VirtualMachines).Namespace(ns)
}

func apply(t *testing.T, vms dynamic.ResourceInterface, obj *unstructured.Unstructured, manager string, force bool) (*unstructured.Unstructured, error) {
	t.Helper()
	return vms.Apply(t.Context(), obj.GetName(), obj, metav1.ApplyOptions{FieldManager: manager, Force: force})
}

// names returns the name of each entry of the list at path in obj.
func names(t *testing.T, obj *unstructured.Unstructured, path ...string) []string {
	t.Helper()
	list, _, err := unstructured.NestedSlice(obj.Object, path...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list {
		out = append(out, e.(map[string]any)["name"].(string))
	}
	return out
}

var (
	disksPath   = []string{"spec", "template", "spec", "domain", "devices", "disks"}
	volumesPath = []string{"spec", "template", "spec", "volumes"}
)
