package power

import (
	"context"
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// BootPatch is a partial change of the boot override (Redfish PATCH of
// Boot): nil fields keep their recorded value.
type BootPatch struct {
	Target  *system.BootTarget
	Enabled *system.BootEnabled
	Mode    *system.BootMode
	// IfVersion, when set, is the VM resourceVersion the client saw (its
	// If-Match): the patch fails with ErrVersionMismatch if the VM changed.
	IfVersion string
}

// SetBoot merges patch into the recorded override and applies it through
// redfish-boot: boot orders are laid out (or released) and a Mode maps to
// firmware.bootloader efi or bios. A resulting Once override is armed with
// the UID of the current VMI: it reverts after the next VMI reaches Running.
// It returns the VM as written.
func (s *Service) SetBoot(ctx context.Context, key system.Key, patch BootPatch) (*apply.VM, error) {
	vm, err := s.w.Boot(ctx, key, func(vm *apply.VM, o *system.BootOverride) error {
		if patch.IfVersion != "" && patch.IfVersion != vm.Object.GetResourceVersion() {
			return fmt.Errorf("%w: have %s, client saw %s", ErrVersionMismatch, vm.Object.GetResourceVersion(), patch.IfVersion)
		}
		if patch.Target != nil {
			o.Target = *patch.Target
		}
		if patch.Enabled != nil {
			o.Enabled = *patch.Enabled
		}
		if patch.Mode != nil {
			o.Mode = *patch.Mode
		}
		if err := apply.ValidateBoot(*o); err != nil {
			return err
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
