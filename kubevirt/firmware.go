package kubevirt

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Firmware is what a VM boots, read from its spec alone, as KubeVirt
// decides it: UEFI whenever firmware.bootloader.efi is set, with Secure
// Boot unless efi.secureBoot is false (KubeVirt's default is true);
// otherwise BIOS (Legacy), with or without firmware.bootloader.bios. It is
// the one answer to "what does this VM boot" for Redfish reads and for the
// decisions of writes alike: what its next VMI boots.
func Firmware(vm *unstructured.Unstructured) (mode system.BootMode, secureBoot bool) {
	return firmwareAt(vm, EFI)
}

// VMIFirmware is what a VMI boots, by the same rule as [Firmware], from the
// VMI's own spec (virt-controller copies the VM's template into it when it
// creates the VMI; later changes to the VM do not reach it): the firmware
// the running system booted.
func VMIFirmware(vmi *unstructured.Unstructured) (mode system.BootMode, secureBoot bool) {
	return firmwareAt(vmi, VMIEFI)
}

func firmwareAt(obj *unstructured.Unstructured, efiPath Path) (system.BootMode, bool) {
	efi, found, err := unstructured.NestedFieldNoCopy(obj.Object, efiPath...)
	if !found || err != nil || efi == nil {
		return system.BootLegacy, false
	}
	m, _ := efi.(map[string]any)
	sb, set := m[KeySecureBoot].(bool)
	return system.BootUEFI, !set || sb
}
