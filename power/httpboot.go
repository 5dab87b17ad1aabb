package power

import (
	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// validateUefiHttp refuses a pending UefiHttp override the bridge cannot
// boot: one without Boot.HttpBootUri (the bridge has no DHCP-provided boot
// URI to import) or on a VM that does not boot UEFI. The refusal names the
// property of patch that made the override so (refusedBy).
func validateUefiHttp(vm *apply.VM, o system.BootOverride, patch system.BootPatch) error {
	if o.Target != system.BootUefiHttp || !o.Pending() {
		return nil
	}
	if o.HTTPBootURI == "" {
		r := refusedBy(patch, apply.PropertyHTTPBootURI)
		r.Reason = "BootSourceOverrideTarget UefiHttp needs Boot.HttpBootUri, the http(s) URL of the image to boot (a URI from DHCP is not supported): " +
			"send HttpBootUri with the target, or choose another BootSourceOverrideTarget before clearing it."
		return r
	}
	mode := o.Mode
	if mode == "" {
		mode, _ = vm.Firmware()
	}
	if mode != system.BootUEFI {
		r := refusedBy(patch, apply.PropertyBootMode)
		r.Reason = "BootSourceOverrideTarget UefiHttp needs boot mode UEFI, and the boot mode would be " + string(mode) +
			": keep or set BootSourceOverrideMode UEFI, or choose another BootSourceOverrideTarget first."
		return r
	}
	return nil
}

// refusedBy is the refusal of a UefiHttp override patch left unbootable,
// because of other (Boot/HttpBootUri or Boot/BootSourceOverrideMode): it
// names the property and value patch sent that did it, the target when
// patch sent it, else other when patch sent it, else the lifetime.
func refusedBy(patch system.BootPatch, other string) *apply.RefusedError {
	switch {
	case patch.Target != nil:
		return &apply.RefusedError{Property: apply.PropertyBootTarget, Value: string(*patch.Target)}
	case other == apply.PropertyHTTPBootURI && patch.HTTPBootURI != nil:
		return &apply.RefusedError{Property: other, Value: *patch.HTTPBootURI}
	case other == apply.PropertyBootMode && patch.Mode != nil:
		return &apply.RefusedError{Property: other, Value: string(*patch.Mode)}
	case patch.Enabled != nil:
		return &apply.RefusedError{Property: apply.PropertyBootEnabled, Value: string(*patch.Enabled)}
	}
	return &apply.RefusedError{Property: apply.PropertyBootTarget, Value: string(system.BootUefiHttp)}
}
