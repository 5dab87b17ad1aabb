package apply

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Redfish properties a [RefusedError] names: Boot's, below the
// ComputerSystem, and SecureBoot's SecureBootEnable.
const (
	PropertyBootTarget  = "Boot/BootSourceOverrideTarget"
	PropertyBootEnabled = "Boot/BootSourceOverrideEnabled"
	PropertyBootMode    = "Boot/BootSourceOverrideMode"
	PropertyHTTPBootURI = "Boot/HttpBootUri"
	PropertySecureBoot  = "SecureBootEnable"
)

// RefusedError is a value the bridge refuses (a firmware change the VM
// would not boot as Redfish then reports, a boot override it cannot boot, a
// reset it cannot do). It names what the client sent, in Redfish's words,
// so the refusal the client sees names it too; Reason is written for the
// Redfish client (it names what to do). The error is also [ErrInvalid].
type RefusedError struct {
	// Property is the Redfish property refused, as a path below the
	// resource the request wrote: "Boot/BootSourceOverrideMode",
	// "SecureBootEnable", "ResetType".
	Property string
	// Value is the value sent ("" for null).
	Value string
	// ConflictsWith names the property whose value stands against it (the
	// client changes that one first, e.g. Secure Boot and the boot mode);
	// "": the VM's spec or what the bridge can do is in the way.
	ConflictsWith string
	Reason        string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: value %q of %s: %s", ErrInvalid, e.Value, e.Property, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *RefusedError) Unwrap() error { return ErrInvalid }

// ErrForeignEFI is in the chain of [ValidateLegacy]'s answer when the only
// thing between vm and Legacy is firmware.bootloader.efi belonging (in
// part) to another writer (the VM's author, typically). An apply cannot
// remove another manager's field (forcing only the leaves left efi owned
// by the author and emptied to null, which the CRD rejects), so
// [Client.Boot] removes efi first with a merge patch under redfish-boot,
// preconditioned on the resourceVersion read ([Client.releaseEFI]), and
// runs the change again on the result. Through any other [Writer] the
// answer is a refusal ([*RefusedError]).
var ErrForeignEFI = errors.New("firmware.bootloader.efi belongs to another writer")

// ValidateLegacy decides switching vm to Legacy: refused while the VM's
// spec boots Secure Boot (efi.secureBoot true or unset: a BMC refuses
// Legacy while Secure Boot is enabled; the client disables it first), and
// [ErrForeignEFI] (with the refusal a Writer that cannot release efi
// answers) while anything of firmware.bootloader.efi belongs to someone
// other than redfish-boot: KubeVirt boots UEFI whenever efi is set. efi
// that redfish-boot wrote itself is removed by the Legacy apply. The
// answer for a VM read from a [DecisionCache] is decided once per
// resourceVersion and kept there.
func ValidateLegacy(vm *VM) error {
	rv := vm.Object.GetResourceVersion()
	if vm.decisions == nil || rv == "" {
		return validateLegacy(vm)
	}
	a, ok := vm.decisions.VMOwnersDecision(vm.Key, rv, func() any {
		if err := validateLegacy(vm); err != nil {
			return legacyAnswer{err: err}
		}
		return legacyAllowed
	})
	if !ok {
		return validateLegacy(vm)
	}
	return a.(legacyAnswer).err
}

// legacyAnswer is [ValidateLegacy]'s answer as a [DecisionCache] keeps it
// (never nil).
type legacyAnswer struct {
	err error // shared: do not modify
}

// legacyAllowed is the answer of most VMs, boxed once (not per VM).
var legacyAllowed any = legacyAnswer{}

// validateLegacy is [ValidateLegacy], decided afresh.
func validateLegacy(vm *VM) error {
	efi, found, _ := unstructured.NestedFieldNoCopy(vm.Object.Object, kubevirt.EFI...)
	if !found || efi == nil {
		return nil
	}
	if _, secure := vm.Firmware(); secure {
		return &RefusedError{Property: PropertyBootMode, Value: string(system.BootLegacy), ConflictsWith: PropertySecureBoot,
			Reason: "Secure Boot is enabled (the VirtualMachine's firmware.bootloader.efi.secureBoot), and it exists only under boot mode UEFI: " +
				"BootSourceOverrideMode Legacy is refused while it is. Disable Secure Boot (SecureBootEnable false) first, then set the mode."}
	}
	owned, err := vm.owned()
	if err != nil {
		return fmt.Errorf("read owners of %s: %w", kubevirt.EFI, err)
	}
	prefix := fieldpath.MakePathOrDie(kubevirt.EFI.Any()...)
	var others []string
	for manager, set := range owned {
		if manager != ManagerBoot && touches(set, prefix) {
			others = append(others, manager)
		}
	}
	if len(others) == 0 && ownsEveryLeaf(owned[ManagerBoot], prefix, efi) {
		return nil
	}
	slices.Sort(others)
	who := "a writer other than the bridge"
	if len(others) > 0 {
		who = "field manager " + strings.Join(others, ", ")
	}
	return fmt.Errorf("%w: %w", ErrForeignEFI, &RefusedError{Property: PropertyBootMode, Value: string(system.BootLegacy), Reason: fmt.Sprintf(
		"The VirtualMachine's spec.template.spec.domain.firmware.bootloader.efi is owned by %s, and KubeVirt boots UEFI "+
			"whenever it is set: the bridge will not report Legacy for a VM that boots UEFI. Keep BootSourceOverrideMode UEFI, "+
			"or remove firmware.bootloader.efi from the VirtualMachine and retry.", who)})
}

// touches reports whether set holds prefix or any path below it.
func touches(set *fieldpath.Set, prefix fieldpath.Path) bool {
	found := false
	set.Iterate(func(p fieldpath.Path) {
		if len(p) >= len(prefix) && p[:len(prefix)].Equals(prefix) {
			found = true
		}
	})
	return found
}

// ownsEveryLeaf reports whether set holds every leaf of value at prefix (an
// empty map is its own leaf).
func ownsEveryLeaf(set *fieldpath.Set, prefix fieldpath.Path, value any) bool {
	if set == nil {
		return false
	}
	m, ok := value.(map[string]any)
	if !ok || len(m) == 0 {
		return set.Has(prefix)
	}
	for k, v := range m {
		child := append(prefix.Copy(), fieldpath.PathElement{FieldName: &k})
		if !ownsEveryLeaf(set, child, v) {
			return false
		}
	}
	return true
}

// ResetOverride decides the override of a Bios.ResetBios on vm: o without
// the boot mode and Secure Boot a client set, so that redfish-boot's apply
// releases the firmware fields it wrote for them and the VM boots its
// author's firmware, or KubeVirt's default where the author wrote none.
//
// One field cannot be released: efi.secureBoot where redfish-boot alone
// owns it (it forced its value over the author's, who no longer records
// one) under an efi another writer owns. Released, it would leave that efi
// empty, which the apiserver stores as null and the CRD refuses, or
// without secureBoot, which KubeVirt defaults to Secure Boot on with no
// SMM to run it. There the reset keeps UEFI with Secure Boot Disabled
// (secureBoot false, which needs no SMM): redfish-boot keeps owning that
// one leaf, as the ownership table says for a mode set.
func ResetOverride(vm *VM, o *system.BootOverride) error {
	o.Mode, o.SecureBoot = "", ""
	efi, found, _ := unstructured.NestedFieldNoCopy(vm.Object.Object, kubevirt.EFI...)
	if !found || efi == nil {
		return nil
	}
	owned, err := vm.owned()
	if err != nil {
		return fmt.Errorf("read owners of %s: %w", kubevirt.EFI, err)
	}
	prefix := fieldpath.MakePathOrDie(kubevirt.EFI.Any()...)
	secureBoot := fieldpath.MakePathOrDie(kubevirt.EFI.Child(kubevirt.KeySecureBoot).Any()...)
	if boot := owned[ManagerBoot]; boot == nil || !boot.Has(secureBoot) {
		return nil
	}
	othersEFI := false
	for manager, set := range owned {
		if manager == ManagerBoot {
			continue
		}
		if set.Has(secureBoot) {
			return nil // another writer keeps the value
		}
		othersEFI = othersEFI || touches(set, prefix)
	}
	if othersEFI {
		o.Mode, o.SecureBoot = system.BootUEFI, system.SecureBootDisabled
	}
	return nil
}
