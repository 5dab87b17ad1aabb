package ipmi

import (
	"context"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// System boot option parameters (IPMI v2.0 table 28-14).
const (
	bootParamSetInProgress = 0
	bootParamValidClearing = 3
	bootParamInfoAck       = 4
	bootParamFlags         = 5

	// validClearingKept is parameter 3 as the bridge behaves: the valid
	// bit is never cleared by PEF (bit 4), the 60 s timeout (bit 3, what
	// Ironic's 0x08 asks) or the watchdog (bit 2); a once override is
	// cleared by the boot it applies to (bits 1 and 0 clear). Bits 7-5 are
	// reserved.
	validClearingKept     = 0x1C
	validClearingReserved = 0xE0

	bootFlagValid      = 0x80
	bootFlagPersistent = 0x40
	bootFlagEFI        = 0x20

	bootDevNone  = 0x0
	bootDevPXE   = 0x1
	bootDevDisk  = 0x2
	bootDevSafe  = 0x3
	bootDevCDROM = 0x5
)

// bootTargets maps a boot flags device selector to a Redfish target; BIOS
// setup, diagnostics and removable media are not among them (the bridge
// cannot enter firmware setup, see system.BootTargets).
var bootTargets = map[byte]system.BootTarget{
	bootDevNone:  system.BootNone,
	bootDevPXE:   system.BootPxe,
	bootDevDisk:  system.BootHdd,
	bootDevSafe:  system.BootHdd,
	bootDevCDROM: system.BootCd,
}

// setBootOptions serves Set System Boot Options: the boot flags become a
// Redfish boot override (target, Once or Continuous, UEFI or Legacy)
// written by the same verb as a Boot PATCH; set-in-progress and the boot
// info acknowledgement are accepted and kept nowhere (nothing else sets
// boot options here), and so is the valid bit clearing (Ironic's
// ipmitool driver sends it before every boot device: the bridge never
// clears an override on a timer, whatever it asks).
func (e *endpoint) setBootOptions(ctx context.Context, data []byte) byte {
	if len(data) < 1 {
		return ccRequestLength
	}
	switch data[0] & 0x7F {
	case bootParamSetInProgress, bootParamInfoAck:
		return ccOK
	case bootParamValidClearing:
		if len(data) != 2 {
			return ccRequestLength
		}
		if data[1]&validClearingReserved != 0 {
			return ccInvalidData
		}
		return ccOK
	case bootParamFlags:
	default:
		return ccParamNotSupported
	}
	if len(data) != 6 {
		return ccRequestLength
	}
	patch, ok := bootPatch(data[1], data[2])
	if !ok {
		return ccInvalidData
	}
	if err := e.srv.backend.SetBoot(ctx, e.key, patch); err != nil {
		return e.failed(ctx, "set boot options", err)
	}
	return ccOK
}

// bootPatch is the Redfish boot override that boot flags bytes 1 and 2 ask for.
func bootPatch(flags, dev byte) (system.BootPatch, bool) {
	enabled := system.BootDisabled
	if flags&bootFlagValid != 0 {
		enabled = system.BootOnce
		if flags&bootFlagPersistent != 0 {
			enabled = system.BootContinuous
		}
	}
	if enabled == system.BootDisabled {
		return system.BootPatch{Enabled: &enabled}, true
	}
	target, ok := bootTargets[(dev>>2)&0x0F]
	if !ok {
		return system.BootPatch{}, false
	}
	mode := system.BootLegacy
	if flags&bootFlagEFI != 0 {
		mode = system.BootUEFI
	}
	if target == system.BootNone {
		enabled = system.BootDisabled
		return system.BootPatch{Enabled: &enabled}, true
	}
	return system.BootPatch{Target: &target, Enabled: &enabled, Mode: &mode}, true
}

// getBootOptions serves Get System Boot Options (data: parameter, set,
// block) for the parameters setBootOptions accepts.
func (e *endpoint) getBootOptions(ctx context.Context, data []byte) (byte, []byte) {
	if len(data) != 3 {
		return ccRequestLength, nil
	}
	param := data[0] & 0x7F
	switch param {
	case bootParamSetInProgress:
		return ccOK, []byte{0x01, param, 0x00}
	case bootParamValidClearing:
		return ccOK, []byte{0x01, param, validClearingKept}
	case bootParamInfoAck:
		return ccOK, []byte{0x01, param, 0x00, 0x00}
	case bootParamFlags:
	default:
		return ccParamNotSupported, nil
	}
	st, err := e.srv.backend.State(ctx, e.key)
	if err != nil {
		return e.failed(ctx, "get boot options", err), nil
	}
	var flags, dev byte
	if st.BootMode == system.BootUEFI {
		flags |= bootFlagEFI
	}
	if st.Boot.Enabled == system.BootOnce || st.Boot.Enabled == system.BootContinuous {
		flags |= bootFlagValid
		if st.Boot.Enabled == system.BootContinuous {
			flags |= bootFlagPersistent
		}
		switch st.Boot.Target {
		case system.BootPxe, system.BootUefiHttp:
			dev = bootDevPXE
		case system.BootHdd:
			dev = bootDevDisk
		case system.BootCd:
			dev = bootDevCDROM
		}
	}
	return ccOK, []byte{0x01, param, flags, dev << 2, 0x00, 0x00, 0x00}
}
