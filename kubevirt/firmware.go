package kubevirt

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Firmware is what a VM boots, read from its spec alone, as KubeVirt
// decides it: UEFI (efi true) whenever firmware.bootloader.efi is set, with
// Secure Boot unless efi.secureBoot is false (KubeVirt's default is true);
// otherwise BIOS, with or without firmware.bootloader.bios. It is the one
// answer to "what does this VM boot" for reads and for the decisions of
// writes alike: what its next VMI boots. apply.VM.Firmware says it in
// Redfish words.
func Firmware(vm *unstructured.Unstructured) (efi, secureBoot bool) {
	return firmwareAt(vm, EFI)
}

// VMIFirmware is what a VMI boots, by the same rule as [Firmware], from the
// VMI's own spec (virt-controller copies the VM's template into it when it
// creates the VMI; later changes to the VM do not reach it): the firmware
// the running system booted.
func VMIFirmware(vmi *unstructured.Unstructured) (efi, secureBoot bool) {
	return firmwareAt(vmi, VMIEFI)
}

func firmwareAt(obj *unstructured.Unstructured, efiPath Path) (efi, secureBoot bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, efiPath...)
	if !found || err != nil || v == nil {
		return false, false
	}
	m, _ := v.(map[string]any)
	sb, set := m[KeySecureBoot].(bool)
	return true, !set || sb
}
