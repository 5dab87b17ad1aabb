package kubevirt

import (
	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// legacyUUIDNamespace is virt-controller's namespace for the firmware UUID
// it derives from a VM's name (pkg/virt-controller/watch/vm/firmware.go,
// magicUUID, v1.9.0).
var legacyUUIDNamespace = uuid.MustParse("6a1a24a1-4061-4607-8bf4-a3963d0c5895")

// LegacyFirmwareUUID is the firmware UUID virt-controller v1.9 persists in
// a VM's template when it has none (CalculateLegacyUUID: a SHA-1 UUID of
// the VM's name alone), and so the SMBIOS UUID its guest sees.
func LegacyFirmwareUUID(vmName string) string {
	return uuid.NewSHA1(legacyUUIDNamespace, []byte(vmName)).String()
}

// FirmwareUUIDOf is the firmware UUID of a VM's template, else of its VMI
// (may be nil), else the one virt-controller will persist: the system UUID
// is the guest's from the VM's creation on and never changes when
// virt-controller writes it.
func FirmwareUUIDOf(vm, vmi *unstructured.Unstructured) string {
	if s := StringAt(vm.Object, FirmwareUUID...); s != "" {
		return s
	}
	if vmi != nil {
		if s := StringAt(vmi.Object, VMIFirmwareUUID...); s != "" {
			return s
		}
	}
	return LegacyFirmwareUUID(vm.GetName())
}
