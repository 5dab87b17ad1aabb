package power

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// SetBoot merges patch into the recorded override and applies it through
// redfish-boot: boot orders are laid out (or released) and a Mode maps to
// firmware.bootloader efi or bios. A resulting Once override is armed with
// the UID of the current VMI: it reverts after the next VMI reaches Running.
// Mode UEFI on a VM that boots UEFI keeps its Secure Boot setting. Mode
// Legacy is refused ([*apply.RefusedError]) while Secure Boot is Enabled
// (the client disables it first); firmware.bootloader.efi that belongs to
// another writer is removed first ([apply.ValidateLegacy],
// [apply.ErrForeignEFI]: KubeVirt would keep booting UEFI). It returns the
// VM as written.
func (s *Service) SetBoot(ctx context.Context, key system.Key, patch system.BootPatch) (*apply.VM, error) {
	vm, err := s.w.Boot(ctx, key, func(vm *apply.VM, o *system.BootOverride) error {
		if err := mergeBoot(vm, o, patch); err != nil {
			return s.confirm(ctx, vm, err)
		}
		if o.Enabled == system.BootOnce && (patch.Target != nil || patch.Enabled != nil) {
			o.ArmedVMI = ""
			if vm.VMI != nil {
				o.ArmedVMI = string(vm.VMI.GetUID())
			}
		}
		if o.Enabled != system.BootOnce {
			o.ArmedVMI = ""
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set boot override of %s: %w", key, err)
	}
	return vm, nil
}

// mergeBoot merges patch into o and decides it on vm: the refusal of
// [Service.SetBoot] (nil when the patch is accepted). It reads no more than
// vm, so [BootModes] asks it what SetBoot would answer.
func mergeBoot(vm *apply.VM, o *system.BootOverride, patch system.BootPatch) error {
	if patch.Mode != nil {
		keepSecureBoot(vm, o, *patch.Mode)
	}
	patch.MergeInto(o)
	if err := validateUefiHttp(vm, *o, patch); err != nil {
		return err
	}
	if err := apply.ValidateSecureBoot(*o); err != nil {
		return err
	}
	if patch.Mode != nil && *patch.Mode == system.BootLegacy {
		return apply.ValidateLegacy(vm)
	}
	return nil
}

// BootModes are the BootSourceOverrideMode values [Service.SetBoot] accepts
// for vm now, each sent alone (what a System advertises as the mode's
// allowable values): UEFI, and Legacy unless it is refused (Secure Boot
// Enabled, in the override or the spec, or a pending UefiHttp override:
// [apply.ValidateLegacy]). firmware.bootloader.efi owned by another writer
// does not refuse it: the Writer removes it ([apply.ErrForeignEFI]). vm
// must carry its owners (a read through the Writer).
func BootModes(vm *apply.VM) []system.BootMode {
	var out []system.BootMode
	for _, m := range system.BootModes {
		o := vm.Boot
		if err := mergeBoot(vm, &o, system.BootPatch{Mode: &m}); err == nil || errors.Is(err, apply.ErrForeignEFI) {
			out = append(out, m)
		}
	}
	return out
}

// SetSecureBoot records Secure Boot enabled or disabled in the override and
// applies it through redfish-boot (efi.secureBoot, and features.smm.enabled
// while enabled). Secure Boot exists only under UEFI: enabling it when the
// VM boots Legacy (its spec has no efi: [kubevirt.Firmware]) is refused with
// [*apply.RefusedError], as a BMC refuses it in BIOS mode; Ironic sets the
// UEFI mode first. When the VM boots UEFI, UEFI is recorded so that
// redfish-boot writes the bootloader. Disabling it on a Legacy VM only
// records the setting. It returns the VM as written.
func (s *Service) SetSecureBoot(ctx context.Context, key system.Key, enable bool) (*apply.VM, error) {
	vm, err := s.w.Boot(ctx, key, func(vm *apply.VM, o *system.BootOverride) error {
		mode, _ := vm.Firmware()
		if enable && mode != system.BootUEFI {
			return s.confirm(ctx, vm, &apply.RefusedError{Property: apply.PropertySecureBoot, Value: "true", ConflictsWith: "BootSourceOverrideMode", Reason: "Secure Boot needs boot mode UEFI and the system boots " + string(mode) + ": set BootSourceOverrideMode UEFI first."})
		}
		o.SecureBoot = system.SecureBootDisabled
		if enable {
			o.SecureBoot = system.SecureBootEnabled
		}
		if mode == system.BootUEFI {
			o.Mode = system.BootUEFI
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set secure boot of %s: %w", key, err)
	}
	return vm, nil
}

// keepSecureBoot records the Secure Boot the VM boots with when the client
// sets mode UEFI on a VM that already boots UEFI and no setting is recorded
// (the author's efi): the bootloader redfish-boot then writes keeps it
// instead of turning Secure Boot off.
func keepSecureBoot(vm *apply.VM, o *system.BootOverride, mode system.BootMode) {
	current, secure := vm.Firmware()
	if mode != system.BootUEFI || current != system.BootUEFI || o.SecureBoot != "" {
		return
	}
	o.SecureBoot = system.SecureBootDisabled
	if secure {
		o.SecureBoot = system.SecureBootEnabled
	}
}

// confirm returns refusal, decided on read, unless read is older than the VM
// live (the informer cache a write behind, e.g. a boot mode set a moment
// ago): then it returns a Conflict, and the Writer retries the decision on a
// live read. It costs one GET, on refusals only.
func (s *Service) confirm(ctx context.Context, read *apply.VM, refusal error) error {
	if s.dyn == nil {
		return refusal
	}
	live, err := s.dyn.Resource(kubevirt.VirtualMachines).Namespace(read.Key.Namespace).Get(ctx, read.Key.Name, metav1.GetOptions{})
	if err != nil || live.GetResourceVersion() == read.Object.GetResourceVersion() {
		return refusal
	}
	return apierrors.NewConflict(kubevirt.VirtualMachines.GroupResource(), read.Key.Name, fmt.Errorf("decided on a stale read: %w", refusal))
}

// ResetFirmware is Bios.ResetBios: it forgets the boot mode and Secure Boot
// a Redfish client set (the override's Mode and SecureBoot) and applies the
// override through redfish-boot, which so releases the fields it wrote for
// them (firmware.bootloader efi.secureBoot or bios, features.smm.enabled):
// the VM's next start boots the firmware its author wrote, or KubeVirt's
// default (BIOS) where the author wrote none. A boot override (target,
// enabled, HttpBootUri) stays as set. Fields of the author that redfish-boot
// took over with a forced apply (a secureBoot the client changed) or that a
// Legacy switch removed (the author's efi) are not brought back: nobody
// recorded them; where releasing such a secureBoot would leave the
// author's efi invalid, the reset keeps UEFI with Secure Boot Disabled
// ([apply.ResetOverride]). It returns the VM as written.
func (s *Service) ResetFirmware(ctx context.Context, key system.Key) (*apply.VM, error) {
	vm, err := s.w.Boot(ctx, key, func(vm *apply.VM, o *system.BootOverride) error {
		return apply.ResetOverride(vm, o)
	})
	if err != nil {
		return nil, fmt.Errorf("reset firmware of %s: %w", key, err)
	}
	return vm, nil
}
