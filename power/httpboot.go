package power

import (
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// validateUefiHttp refuses a pending UefiHttp override the bridge cannot
// boot: one without Boot.HttpBootUri (the bridge has no DHCP-provided boot
// URI to import) or on a VM that does not boot UEFI.
func validateUefiHttp(vm *apply.VM, o system.BootOverride) error {
	if o.Target != system.BootUefiHttp || !o.Pending() {
		return nil
	}
	if o.HTTPBootURI == "" {
		return fmt.Errorf("%w: BootSourceOverrideTarget UefiHttp needs Boot.HttpBootUri (a URI from DHCP is not supported)", apply.ErrInvalid)
	}
	mode := o.Mode
	if mode == "" {
		mode, _ = kubevirt.Firmware(vm.Object)
	}
	if mode != system.BootUEFI {
		return fmt.Errorf("%w: BootSourceOverrideTarget UefiHttp needs boot mode UEFI, the system boots %s: set BootSourceOverrideMode UEFI", apply.ErrInvalid, mode)
	}
	return nil
}
