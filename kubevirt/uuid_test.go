package kubevirt

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestFirmwareUUIDOf: the template's UUID, else the VMI's, else the one
// virt-controller will persist (a function of the name alone; sim's
// TestNodeSide checks it against the real virt-controller).
func TestFirmwareUUIDOf(t *testing.T) {
	vm := func(uuid string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetName("node-1")
		u.SetNamespace("a")
		if uuid != "" {
			if err := unstructured.SetNestedField(u.Object, uuid, FirmwareUUID...); err != nil {
				t.Fatal(err)
			}
		}
		return u
	}
	vmi := &unstructured.Unstructured{Object: map[string]any{}}
	if err := unstructured.SetNestedField(vmi.Object, "vmi-uuid", VMIFirmwareUUID...); err != nil {
		t.Fatal(err)
	}
	if got := FirmwareUUIDOf(vm("tmpl-uuid"), vmi); got != "tmpl-uuid" {
		t.Errorf("template UUID set: %q", got)
	}
	if got := FirmwareUUIDOf(vm(""), vmi); got != "vmi-uuid" {
		t.Errorf("VMI UUID only: %q", got)
	}
	derived := FirmwareUUIDOf(vm(""), nil)
	if derived != LegacyFirmwareUUID("node-1") || derived == LegacyFirmwareUUID("node-2") || len(derived) != 36 {
		t.Errorf("no UUID anywhere: %q, want LegacyFirmwareUUID(name) %q", derived, LegacyFirmwareUUID("node-1"))
	}
	other := vm("")
	other.SetNamespace("b")
	if FirmwareUUIDOf(other, nil) != derived {
		t.Errorf("virt-controller's UUID depends on the name alone; the namespace changed it")
	}
}
