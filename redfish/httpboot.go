package redfish

import (
	"bytes"
	"net/url"
	"slices"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// bootTargets is BootSourceOverrideTarget@Redfish.AllowableValues: UefiHttp
// only where it works, on a system that boots UEFI.
func bootTargets(mode system.BootMode) []system.BootTarget {
	if mode == system.BootUEFI {
		return system.BootTargets
	}
	return slices.DeleteFunc(slices.Clone(system.BootTargets), func(t system.BootTarget) bool { return t == system.BootUefiHttp })
}

// httpBootURI reads Boot.HttpBootUri: nil when absent, "" for null (sushy
// sends null to clear it), else an http(s) URL with a host.
func httpBootURI(b *props, name string) *string {
	v, ok := b.body[name]
	if !ok {
		return nil
	}
	if string(bytes.TrimSpace(v)) == "null" {
		b.used[name] = true
		return new("")
	}
	s, ok := b.str(name, nil)
	if !ok {
		return nil
	}
	if s == "" {
		return new("")
	}
	if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		m := msg("PropertyValueFormatError", []string{b.path + name}, logctx.RedactURL(s), name)
		m.Resolution = resolveURLFormat
		b.add(m)
		return nil
	}
	return &s
}

// mediaName is the Name of a virtual-media slot.
func mediaName(slot string) string {
	if system.KindOf(slot) == system.SlotUSB {
		return "Virtual USB stick " + slot
	}
	return "Virtual CD " + slot
}

// checkUefiHttp reports target UefiHttp on a system that would not boot
// UEFI (the mode patched, recorded or effective).
func checkUefiHttp(b *props, v SystemView, patch system.BootPatch) {
	if patch.Target == nil || *patch.Target != system.BootUefiHttp {
		return
	}
	mode := v.Boot.Mode
	if mode == "" {
		mode = v.BootMode
	}
	if patch.Mode != nil {
		mode = *patch.Mode
	}
	if mode != system.BootUEFI {
		m := msg("PropertyValueConflict", []string{b.path + "BootSourceOverrideTarget", b.path + "BootSourceOverrideMode"},
			"BootSourceOverrideTarget", "BootSourceOverrideMode")
		m.Resolution = "BootSourceOverrideTarget UefiHttp needs boot mode UEFI, and the boot mode would be " + string(mode) +
			": set BootSourceOverrideMode UEFI with it, or choose another target."
		b.add(m)
	}
}
