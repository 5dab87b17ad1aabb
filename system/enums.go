package system

// PowerState is ComputerSystem.PowerState; only Redfish enum values.
type PowerState string

// Redfish PowerState values.
const (
	PowerOn          PowerState = "On"
	PowerOff         PowerState = "Off"
	PowerPoweringOn  PowerState = "PoweringOn"
	PowerPoweringOff PowerState = "PoweringOff"
	PowerPaused      PowerState = "Paused"
)

// ResetType is the ResetType parameter of #ComputerSystem.Reset.
type ResetType string

// Reset types the bridge honours.
const (
	ResetOn               ResetType = "On"
	ResetForceOff         ResetType = "ForceOff"
	ResetGracefulShutdown ResetType = "GracefulShutdown"
	ResetForceRestart     ResetType = "ForceRestart"
	ResetGracefulRestart  ResetType = "GracefulRestart"
	ResetForceOn          ResetType = "ForceOn"
	ResetPushPowerButton  ResetType = "PushPowerButton"
)

// ResetTypes lists the reset types in the order they are advertised. Nmi is
// not one: KubeVirt cannot inject an NMI, so a request for it is a value
// outside this list (sushy refuses it before sending, from the
// AllowableValues).
var ResetTypes = []ResetType{
	ResetOn, ResetForceOn, ResetForceOff, ResetGracefulShutdown,
	ResetForceRestart, ResetGracefulRestart, ResetPushPowerButton,
}

// BootTarget is Boot.BootSourceOverrideTarget.
type BootTarget string

// Boot targets the bridge honours.
const (
	BootNone BootTarget = "None"
	BootPxe  BootTarget = "Pxe"
	BootHdd  BootTarget = "Hdd"
	BootCd   BootTarget = "Cd"
	// BootUefiHttp boots the image of Boot.HttpBootUri (imported into the
	// [HTTPBootSlot]); UEFI only.
	BootUefiHttp BootTarget = "UefiHttp"
)

// BootTargets lists the targets in the order they are advertised.
// BiosSetup (Ironic's boot device "bios") is not one: entering the firmware
// setup menu needs a switch KubeVirt v1.9.0 does not have (its Bootloader
// holds only bios.useSerial and efi.secureBoot/persistent, and OVMF's
// menu opens only on a key press at the console), so a request for it is a
// value outside this list (sushy refuses it before sending, from the
// AllowableValues; a PATCH is a 400 PropertyValueNotInList).
var BootTargets = []BootTarget{BootNone, BootPxe, BootHdd, BootCd, BootUefiHttp}

// BootEnabled is Boot.BootSourceOverrideEnabled.
type BootEnabled string

// Override lifetimes.
const (
	BootDisabled   BootEnabled = "Disabled"
	BootOnce       BootEnabled = "Once"
	BootContinuous BootEnabled = "Continuous"
)

// BootEnableds lists the lifetimes in the order they are advertised.
var BootEnableds = []BootEnabled{BootDisabled, BootOnce, BootContinuous}

// BootMode is Boot.BootSourceOverrideMode; UEFI maps to KubeVirt's
// firmware.bootloader.efi, Legacy to firmware.bootloader.bios.
type BootMode string

// Boot modes.
const (
	BootUEFI   BootMode = "UEFI"
	BootLegacy BootMode = "Legacy"
)

// BootModes lists the modes in the order they are advertised.
var BootModes = []BootMode{BootUEFI, BootLegacy}

// SecureBoot is the UEFI Secure Boot setting a Redfish client asked for
// (SecureBoot.SecureBootEnable, Bios attribute SecureBoot); "" means never
// set. Enabled maps to firmware.bootloader.efi.secureBoot true plus
// features.smm.enabled true (KubeVirt's secure boot needs SMM) and exists
// only with BootUEFI.
type SecureBoot string

// Secure Boot settings.
const (
	SecureBootEnabled  SecureBoot = "Enabled"
	SecureBootDisabled SecureBoot = "Disabled"
)

// SecureBoots lists the settings a client can ask for.
var SecureBoots = []SecureBoot{SecureBootEnabled, SecureBootDisabled}

// In reports whether v is one of allowed.
func In[T comparable](v T, allowed []T) bool {
	for _, a := range allowed {
		if a == v {
			return true
		}
	}
	return false
}
