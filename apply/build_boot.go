package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// bootloaderOf returns the firmware.bootloader intent of an override's mode,
// nil for none. UEFI carries secureBoot explicitly: true only when Secure
// Boot is Enabled (KubeVirt's default, true, would need SMM).
func bootloaderOf(o system.BootOverride) map[string]any {
	switch o.Mode {
	case system.BootUEFI:
		return map[string]any{kubevirt.KeyEFI: map[string]any{kubevirt.KeySecureBoot: o.SecureBoot == system.SecureBootEnabled}}
	case system.BootLegacy:
		return map[string]any{kubevirt.KeyBIOS: map[string]any{}}
	}
	return nil
}

// ValidateSecureBoot refuses Secure Boot Enabled under any mode but UEFI
// (secure boot is a UEFI feature; the client sets BootSourceOverrideMode
// UEFI first, as Ironic does). power/ decides it once per request, on the
// read the write is preconditioned on; BuildBoot trusts the override. o is
// the override as the request would leave it, so its Mode is the one asked
// for, not the one the system has: the reason says what is (Secure Boot
// enabled) and names the mode as requested.
func ValidateSecureBoot(o system.BootOverride) error {
	if o.SecureBoot != system.SecureBootEnabled || o.Mode == system.BootUEFI {
		return nil
	}
	if o.Mode == "" {
		return &RefusedError{Property: PropertyBootMode, ConflictsWith: PropertySecureBoot, Reason: "Secure Boot is enabled, and it exists only under boot mode UEFI, which is not set: " +
			"set BootSourceOverrideMode UEFI, or disable Secure Boot (SecureBootEnable false)."}
	}
	return &RefusedError{Property: PropertyBootMode, Value: string(o.Mode), ConflictsWith: PropertySecureBoot, Reason: fmt.Sprintf("Secure Boot is enabled, and it exists only under boot mode UEFI: "+
		"BootSourceOverrideMode %s is refused while it is. Disable Secure Boot (SecureBootEnable false) first, then set the mode.", o.Mode)}
}

// BuildBoot returns redfish-boot's complete intent for override o given a
// read: the annotation, the boot orders Layout computes (none when o lays out
// nothing, which releases them), the bootloader once a mode is set, and
// features.smm.enabled true while Secure Boot is Enabled (dropped, so
// released, when it is not: an author who owns smm.enabled true as well
// keeps it), and rebootPolicy Terminate while a Once override lays out a
// boot (see armsTerminate; dropped, so released, when it ends).
// Disks named in exclude are left out of the layout (an eject in progress).
// Boot always forces. o is trusted: its values are Redfish enums checked
// where the request entered, and its consistency was decided by the caller
// ([ValidateSecureBoot]).
//
// Map mode: {name, bootOrder} entries for disks and interfaces that exist in
// the read (never a new element). Atomic mode: the whole disks (and, when
// numbered, interfaces) lists as read with bootOrders rewritten; when the
// override stops laying out after it did, every bootOrder is removed; lists
// are sent when they differ from the read or redfish-boot owns them.
func BuildBoot(mode Mode, vm *VM, o system.BootOverride, exclude map[string]bool) (*Body, error) {
	body := skeleton(vm)
	if o != (system.BootOverride{}) {
		if err := setAnnotation(body, AnnotationBoot, o); err != nil {
			return nil, err
		}
	}
	if bl := bootloaderOf(o); bl != nil {
		body.Object = mergeInto(body.Object, kubevirt.Bootloader, bl)
	}
	if o.SecureBoot == system.SecureBootEnabled {
		body.Object = mergeInto(body.Object, kubevirt.SMM, map[string]any{kubevirt.KeyEnabled: true})
	}
	if armsTerminate(vm, o) {
		_ = unstructured.SetNestedField(body.Object, kubevirt.RebootPolicyTerminate, kubevirt.RebootPolicy...)
	}
	layout := Layout(o, devicesOf(vm.Object, exclude))
	if mode == ModeAtomic {
		return buildBootAtomic(vm, body, layout)
	}
	if layout.Disks == nil {
		return &Body{Object: body, Force: true}, nil
	}
	var disks, ifaces []map[string]any
	for _, d := range list(vm.Object, kubevirt.Disks) {
		if n, ok := layout.Disks[kubevirt.NameOf(d)]; ok {
			disks = append(disks, map[string]any{kubevirt.KeyName: kubevirt.NameOf(d), kubevirt.KeyBootOrder: n})
		}
	}
	for _, i := range list(vm.Object, kubevirt.Interfaces) {
		if n, ok := layout.Interfaces[kubevirt.NameOf(i)]; ok {
			ifaces = append(ifaces, map[string]any{kubevirt.KeyName: kubevirt.NameOf(i), kubevirt.KeyBootOrder: n})
		}
	}
	if len(disks) > 0 {
		if err := setList(body, disks, kubevirt.Disks); err != nil {
			return nil, err
		}
	}
	if len(ifaces) > 0 {
		if err := setList(body, ifaces, kubevirt.Interfaces); err != nil {
			return nil, err
		}
	}
	return &Body{Object: body, Force: true}, nil
}

func buildBootAtomic(vm *VM, body *unstructured.Unstructured, layout BootOrders) (*Body, error) {
	strip := layout.Disks == nil && Active(vm.Boot)
	for _, l := range []struct {
		path  []string
		order map[string]int64
	}{{kubevirt.Disks, layout.Disks}, {kubevirt.Interfaces, layout.Interfaces}} {
		elems := list(vm.Object, l.path)
		for _, e := range elems {
			if n, ok := l.order[kubevirt.NameOf(e)]; ok {
				e[kubevirt.KeyBootOrder] = n
			} else if strip || l.order != nil {
				delete(e, kubevirt.KeyBootOrder)
			}
		}
		if len(elems) == 0 || (sameList(vm.Object, l.path, elems) && !ownsList(vm, ManagerBoot, l.path)) {
			continue
		}
		if err := setList(body, elems, l.path); err != nil {
			return nil, err
		}
	}
	return &Body{Object: body, Force: true}, nil
}

// mergeInto sets value at path, creating parents.
func mergeInto(obj map[string]any, path []string, value map[string]any) map[string]any {
	_ = unstructured.SetNestedMap(obj, value, path...)
	return obj
}
