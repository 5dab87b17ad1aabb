package system

import "time"

// MediaPhase is where a virtual-media slot's image is.
type MediaPhase string

// The media state machine: "" (empty) -> Pending -> Importing -> Ready | Failed;
// Eject goes back to "" from any phase.
const (
	MediaEmpty     MediaPhase = ""
	MediaPending   MediaPhase = "Pending"   // accepted, recorded on the VM, no import pod yet
	MediaImporting MediaPhase = "Importing" // PVC and import pod exist
	MediaReady     MediaPhase = "Ready"     // image is on the PVC; Inserted=true
	MediaFailed    MediaPhase = "Failed"    // import failed; Reason says why
)

// Busy reports whether an import is still in flight (power-on must wait).
func (p MediaPhase) Busy() bool { return p == MediaPending || p == MediaImporting }

// MediaSlot is one virtual-media slot as recorded on the VM by the media
// manager (annotation redfish-bridge.io/media.<slot>).
type MediaSlot struct {
	// Slot is the slot id, e.g. "cd0". The CD-ROM disk and volume are named
	// after it (see apply.DiskName).
	Slot  string     `json:"slot"`
	Image string     `json:"image,omitempty"`
	Phase MediaPhase `json:"phase,omitempty"`
	// Reason explains Failed (and the last transition otherwise).
	Reason string `json:"reason,omitempty"`
	// InsertID is unique per accepted insert: a re-insert of the same URL gets
	// a new one, so a stale import can be told from the current one. It also
	// names the Redfish task of the insert.
	InsertID string `json:"insertID,omitempty"`
	// Since is when Phase was entered.
	Since time.Time `json:"since,omitzero"`
	// ClaimName is the PVC holding the image.
	ClaimName string `json:"claimName,omitempty"`
	// SizeBytes is the image size once known.
	SizeBytes int64 `json:"sizeBytes,omitempty"`
}

// Inserted reports Redfish VirtualMedia.Inserted: true only when the image is
// really there.
func (s MediaSlot) Inserted() bool { return s.Phase == MediaReady }

// BootOverride is the boot override as recorded on the VM by the boot manager
// (annotation redfish-bridge.io/boot).
type BootOverride struct {
	Target  BootTarget  `json:"target,omitempty"`
	Enabled BootEnabled `json:"enabled,omitempty"`
	Mode    BootMode    `json:"mode,omitempty"`
	// SecureBoot is the Secure Boot setting asked for; "" (never set, as in
	// annotations written before it existed) writes secureBoot false under a
	// UEFI Mode, like Disabled.
	SecureBoot SecureBoot `json:"secureBoot,omitempty"`
	// ArmedVMI is the UID of the VMI that existed when a Once override was
	// set ("" if none). The override reverts after a VMI with another UID
	// reaches Running: that is exactly one boot.
	ArmedVMI string `json:"armedVMI,omitempty"`
}

// Pending reports whether the override still has to take effect or stay.
func (b BootOverride) Pending() bool {
	return b.Enabled == BootOnce || b.Enabled == BootContinuous
}

// PowerIntent is the power concern's record on the VM (annotation
// redfish-bridge.io/power).
type PowerIntent struct {
	// OnDeferred is set when a power-on arrived while an import was in
	// flight; it is executed when the import completes, or dropped with
	// DroppedReason when it fails.
	OnDeferred    bool      `json:"onDeferred,omitempty"`
	DeferredAt    time.Time `json:"deferredAt,omitzero"`
	DroppedReason string    `json:"droppedReason,omitempty"`
}
