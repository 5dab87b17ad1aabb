package system

import "time"

// MediaPhase is where a virtual-media slot's image is.
type MediaPhase string

// The media state machine: "" (empty) -> Pending -> Importing -> Ready | Failed;
// Eject goes back to "" from any phase.
const (
	MediaEmpty     MediaPhase = ""
	MediaPending   MediaPhase = "Pending"   // accepted, recorded on the VM, no import pod yet; Inserted=true
	MediaImporting MediaPhase = "Importing" // PVC and import pod exist; Inserted=true
	MediaReady     MediaPhase = "Ready"     // image is on the PVC; Inserted=true
	MediaFailed    MediaPhase = "Failed"    // import failed; Reason says why; Inserted=false
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
	// ImportSecret names the import ConfigMap (the CAs the download trusts,
	// when CABundle) and Secret (the credentials, when Credentials), both
	// owned by the VM: what the import needs besides the URL. "" when it
	// needs neither. They are deleted when the import ends and on eject.
	ImportSecret string `json:"importSecret,omitempty"`
	CABundle     bool   `json:"caBundle,omitempty"`
	Credentials  bool   `json:"credentials,omitempty"`
	// Insecure is set when the insert does not verify the image server's
	// TLS certificate (the slot's VerifyCertificate was false).
	Insecure bool `json:"insecure,omitempty"`
	// ActionURI is the Redfish URI the insert was posted to (under the
	// system or under its manager), shown as its task's TargetUri.
	ActionURI string `json:"actionURI,omitempty"`
	// Method is the import method importing the insert (media's "pod" or
	// "cdi"), recorded when its import starts.
	Method string `json:"method,omitempty"`
	// Percent is the import's progress while Importing, when its method
	// reports one (0: unknown).
	Percent int `json:"percent,omitempty"`
	// CacheKey, when the image cache is on, names the namespace's image
	// cache entry of the insert: a hash of the URL, the trust (CAs,
	// VerifyCertificate) and the credentials (media's cache.go).
	CacheKey string `json:"cacheKey,omitempty"`
}

// Inserted reports Redfish VirtualMedia.Inserted: true from the moment an
// insert is accepted (Pending, Importing) until it is ejected or its import
// fails, so that a client's eject-if-inserted ejects an insert whose import
// is still running (Ironic reads Inserted false as "already ejected" and
// sends no EjectMedia). Whether the image is there yet is the slot's
// Status.State (Starting while busy) and its insert's Task; the CD-ROM
// appears on the VM only once Ready.
func (s MediaSlot) Inserted() bool { return s.Phase.Busy() || s.Phase == MediaReady }

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
	// HTTPBootURI is Boot.HttpBootUri: the image target UefiHttp boots,
	// imported into the [HTTPBootSlot] when set.
	HTTPBootURI string `json:"httpBootURI,omitempty"`
	// ArmedVMI is the UID of the VMI that existed when a Once override was
	// set ("" if none). The override reverts after a VMI with another UID
	// reaches Running: that is exactly one boot.
	ArmedVMI string `json:"armedVMI,omitempty"`
	// RebootVMI is the UID of the VMI that booted a Once override with
	// rebootPolicy Terminate in its spec ("" if none): when that VMI ends
	// by itself, its guest rebooted (or powered off: KubeVirt v1.9 records
	// both as VMI Succeeded), and power starts the VM again so that the
	// reboot reaches the disk. Cleared once the next VMI runs.
	RebootVMI string `json:"rebootVMI,omitempty"`
}

// BootPatch is a partial change of the boot override (a Redfish PATCH of
// Boot, or of the Bios BootMode attribute): nil fields keep their recorded
// value. A field added here is merged in [BootPatch.MergeInto] and
// counted in [BootPatch.Empty], beside it. Its values were checked against the Redfish enums where the
// request entered (redfish/), and are not checked again.
type BootPatch struct {
	Target  *BootTarget
	Enabled *BootEnabled
	Mode    *BootMode
	// HTTPBootURI is Boot.HttpBootUri: "" clears it (JSON null).
	HTTPBootURI *string
}

// Empty reports whether p changes nothing.
func (p BootPatch) Empty() bool {
	return p.Target == nil && p.Enabled == nil && p.Mode == nil && p.HTTPBootURI == nil
}

// MergeInto sets the fields of o that p changes. What a change decides
// beyond its own field (Secure Boot kept across a Mode, the refusals) is
// power's.
func (p BootPatch) MergeInto(o *BootOverride) {
	if p.Target != nil {
		o.Target = *p.Target
	}
	if p.Enabled != nil {
		o.Enabled = *p.Enabled
	}
	if p.Mode != nil {
		o.Mode = *p.Mode
	}
	if p.HTTPBootURI != nil {
		o.HTTPBootURI = *p.HTTPBootURI
	}
}

// Pending reports whether the override still has to take effect or stay.
func (b BootOverride) Pending() bool {
	return b.Enabled == BootOnce || b.Enabled == BootContinuous
}

// PowerIntent is the power concern's record on the VM (annotation
// redfish-bridge.io/power).
type PowerIntent struct {
	// OnDeferred is set when a power-on arrived while an import was in
	// flight (a held power-on); it is executed when the imports complete,
	// or dropped with DroppedReason when one fails or Until passes, or
	// cancelled (no reason) by a power-off or an eject of an insert it
	// awaits.
	OnDeferred bool      `json:"onDeferred,omitempty"`
	DeferredAt time.Time `json:"deferredAt,omitzero"`
	// Until is when a held power-on expires (the last On plus the
	// bridge's held power-on timeout); zero in records written before it
	// existed (DeferredAt plus the timeout then).
	Until time.Time `json:"until,omitzero"`
	// Awaits maps each slot whose import was in flight when the power-on
	// was held to that insert's InsertID: the power-on runs only for those
	// inserts, and an eject (or another insert) of one cancels it.
	Awaits        map[string]string `json:"awaits,omitempty"`
	DroppedReason string            `json:"droppedReason,omitempty"`
}

// IsZero reports whether p records nothing.
func (p PowerIntent) IsZero() bool {
	return !p.OnDeferred && p.DeferredAt.IsZero() && p.Until.IsZero() && len(p.Awaits) == 0 && p.DroppedReason == ""
}

// MediaInsert is one InsertMedia request.
type MediaInsert struct {
	Image string
	// UserName and Password are HTTP Basic credentials for the image URL.
	// They are kept in a Secret owned by the VM for the import only, never
	// recorded on the VM, logged or shown.
	UserName, Password string
	// ActionURI is the Redfish URI the insert was posted to, recorded as
	// [MediaSlot.ActionURI].
	ActionURI string
}

// HasCredentials reports whether the insert carries credentials.
func (m MediaInsert) HasCredentials() bool { return m.UserName != "" || m.Password != "" }

// MediaTrust is what a virtual-media slot trusts when it fetches an image
// over HTTPS (Redfish VerifyCertificate and the slot's Certificates). It
// outlives inserts and ejects, like a BMC's setting.
type MediaTrust struct {
	// VerifyCertificate false skips TLS verification of the image server.
	VerifyCertificate bool
	// Certificates are trusted besides the system roots and the bridge's
	// CA bundle, in the order they were added.
	Certificates []MediaCertificate
}

// MediaCertificate is one certificate of a slot's Certificates collection.
type MediaCertificate struct {
	// ID is the member id in the collection ("1", "2", ...).
	ID string
	// PEM is the certificate (or chain) as posted.
	PEM string
}
