package redfish

import (
	"context"
	"time"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventstream"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// SystemView is what the service shows of one system (one VirtualMachine).
type SystemView struct {
	Key system.Key
	// Revision names the versions of the objects the view was built from
	// ("" when unknown): views of one system with the same Revision are
	// equal but for Disks' capacities, which come from PVCs it does not
	// cover. See [Systems.Revision].
	Revision string
	// UUID is the VM's firmware UUID, stable for the life of the VM.
	UUID string
	// Labels are the VM's labels, matched against [auth.Scope.Selector].
	Labels     map[string]string
	PowerState system.PowerState
	// Boot is the recorded boot override.
	Boot system.BootOverride
	// BootMode is the firmware the VM's next boot uses (its spec: efi or
	// bios); a mode just set reads back at once.
	BootMode system.BootMode
	// SecureBoot is whether EFI Secure Boot is enabled in the VM spec (the
	// next boot's).
	SecureBoot bool
	// BootModes are the BootSourceOverrideMode values a PATCH accepts now
	// (its allowable values): never one the backend then refuses.
	BootModes []system.BootMode
	// Booted is the firmware the running system booted (its VMI's spec),
	// nil when no VMI exists: no boot is current.
	Booted *Firmware
	// Sockets, Cores (per socket) and Threads (per core) of the VM's CPU.
	Sockets, Cores, Threads int
	MemoryBytes             int64
	NICs                    []NIC
	Disks                   []Disk
	// Slots lists every virtual-media slot of the system, empty ones too.
	Slots []system.MediaSlot
	// HTTPBoot is the slot of the Boot.HttpBootUri image (not virtual
	// media: never in Slots).
	HTTPBoot system.MediaSlot
	// RestartRequired is set when spec changes (firmware, boot order) wait
	// for the next boot.
	RestartRequired bool
	// Health is Status.Health ("" shows as OK).
	Health system.Health
	// BootProgress is where the last boot got ("" LastState shows as None).
	BootProgress system.BootProgress
}

// Firmware is a boot mode and whether Secure Boot is on.
type Firmware struct {
	Mode       system.BootMode
	SecureBoot bool
}

// NIC is one network interface.
type NIC struct {
	Name string
	MAC  string
	// BootOrder is the interface's bootOrder in the VM spec, 0 for none.
	BootOrder int64
}

// Disk is one disk of the VM (virtual-media CD-ROMs have CDROM set).
type Disk struct {
	Name          string
	CapacityBytes int64
	CDROM         bool
	// Serial is the serial number the VM's spec gives the disk ("" for
	// none): the Drive's SerialNumber, a root-device hint.
	Serial string
	// BootOrder is the disk's bootOrder in the VM spec, 0 for none.
	BootOrder int64
	// Slot is the media slot whose image the disk holds (a virtual-media
	// slot or [system.HTTPBootSlot]), "" for the VM's own disks.
	Slot string
}

// Member is a system as the collections list it.
type Member struct {
	Key system.Key
	// Labels are the VM's labels (shared: do not modify).
	Labels map[string]string
}

// Systems reads systems.
type Systems interface {
	// List returns the systems in scope. The service filters the result
	// with the scope again.
	List(ctx context.Context, scope auth.Scope) ([]SystemView, error)
	// Members returns the systems in scope, sorted by id, without their
	// views (what the Systems, Managers and Chassis collections need).
	// The service filters the result with the scope again.
	Members(ctx context.Context, scope auth.Scope) ([]Member, error)
	// Membership changes whenever a system may have been added or removed
	// or its labels changed; the service keeps rendered collections while
	// it stays the same. It must change after the change is visible to
	// Members, never before.
	Membership() uint64
	// Get returns one system or an error wrapping [ErrNotFound].
	Get(ctx context.Context, key system.Key) (SystemView, error)
	// Revision is the Revision of the view Get would return now, found
	// without building it (cheap: the service asks on every GET of a
	// system to serve the body it rendered for that revision), or "" when
	// it cannot say (then the service calls Get).
	Revision(key system.Key) string
}

// Power drives power.
type Power interface {
	// Reset performs a #ComputerSystem.Reset. A power-on while an image is
	// being imported is deferred by the backend, not refused.
	Reset(ctx context.Context, key system.Key, kind system.ResetType) error
}

// Boot changes boot settings. Firmware changes take effect at the next boot.
type Boot interface {
	SetBoot(ctx context.Context, key system.Key, patch system.BootPatch) error
	SetSecureBoot(ctx context.Context, key system.Key, enable bool) error
	// ResetFirmware is Bios.ResetBios: the boot mode and Secure Boot
	// return to what the VM's author wrote (or KubeVirt's default) at the
	// next boot; a boot override stays.
	ResetFirmware(ctx context.Context, key system.Key) error
}

// Media drives virtual media.
type Media interface {
	// Insert records an insert of image into slot and starts its import; it
	// returns once the state is recorded on the VM. The returned slot's
	// InsertID names the task, so it must be URL-safe ([A-Za-z0-9._-], at
	// most 128 bytes); an empty InsertID means the insert is done (204).
	Insert(ctx context.Context, key system.Key, slot string, req system.MediaInsert) (system.MediaSlot, error)
	// Eject empties slot (a no-op on an empty slot).
	Eject(ctx context.Context, key system.Key, slot string) error
}

// MediaTrust keeps a virtual-media slot's TLS trust (VerifyCertificate and
// Certificates), applied to the slot's next insert.
type MediaTrust interface {
	// Trust returns the slot's settings (VerifyCertificate true and no
	// certificates when never set).
	Trust(ctx context.Context, key system.Key, slot string) (system.MediaTrust, error)
	SetVerifyCertificate(ctx context.Context, key system.Key, slot string, verify bool) error
	// AddCertificate validates and adds a PEM certificate; a bad one is a
	// [BadValueError] on CertificateString.
	AddCertificate(ctx context.Context, key system.Key, slot, pem string) (system.MediaCertificate, error)
	// DeleteCertificate fails with [ErrNotFound] for an unknown id.
	DeleteCertificate(ctx context.Context, key system.Key, slot, id string) error
}

// Events keeps the EventService's subscriptions and sends test events.
type Events interface {
	// Subscribe validates r and records it for owner (an error wrapping
	// eventsub.InvalidError or eventsub.ErrLimit when refused).
	Subscribe(ctx context.Context, owner string, r eventsub.Request) (eventsub.Subscription, error)
	// Subscriptions returns every subscription; the service shows a caller
	// its own (an Administrator every one).
	Subscriptions(ctx context.Context) ([]eventsub.Subscription, error)
	// Unsubscribe deletes a subscription (eventsub.ErrNotFound if gone).
	Unsubscribe(ctx context.Context, id string) error
	// SubmitTestEvent sends e, of eventType, to p's enabled subscriptions
	// (an Administrator's: every one).
	SubmitTestEvent(ctx context.Context, p auth.Principal, e event.Event, eventType string) error
	// Settings are the EventService's delivery retry settings.
	Settings() EventSettings
}

// EventSettings are what the EventService shows of its delivery.
type EventSettings struct {
	RetryAttempts int
	RetryInterval time.Duration
}

// EventPatches change a subscription's writable properties.
type EventPatches interface {
	// Patch applies p to subscription id (an error wrapping
	// eventsub.InvalidError or eventsub.ErrNotFound when refused).
	Patch(ctx context.Context, id string, p eventsub.Patch) (eventsub.Subscription, error)
}

// EventStreams are the EventService's Server-Sent Event streams (package
// eventstream), each replica's from its own bus.
type EventStreams interface {
	// Open opens a stream for p with $filter filter, resuming after the
	// event lastEventID ("" none) (an *eventstream.FilterError for a
	// filter refused, eventstream.ErrLimit past p's cap).
	Open(p auth.Principal, filter, lastEventID string) (*eventstream.Stream, error)
	// WriteTimeout bounds writing one frame: a client that stops reading
	// is dropped after it.
	WriteTimeout() time.Duration
	// SessionEnded ends the open streams of a logged-out session.
	SessionEnded(session string)
}

// Backends is everything the service calls.
type Backends struct {
	Systems Systems
	Power   Power
	Boot    Boot
	Media   Media
	Trust   MediaTrust
	Events  Events
	// EventPatches, optional, lets a subscription be PATCHed (nil: 405).
	EventPatches EventPatches
	Auth         *auth.Authenticator
	// Logs, when set, serves each System's LogService (optional).
	Logs EventLogs
	// Protocols, optional, reports and switches the protocols other parts
	// serve per System (IPMI, SSH); nil: none is shown.
	Protocols Protocols
	// Consoles is the graphical console; nil: none (GraphicalConsole
	// ServiceEnabled false).
	Consoles Consoles
	// Streams are the Server-Sent Event streams; nil: none (the
	// EventService shows no ServerSentEventUri).
	Streams EventStreams
	// Thumbnails serves each running System's screenshot thumbnail; nil:
	// none (404).
	Thumbnails Thumbnails
}

// Protocols reports the protocols the bridge's other parts serve for a
// System, shown in its Manager's NetworkProtocol and SerialConsole, and
// switches them per System.
type Protocols interface {
	// Protocols returns what the bridge serves key's Manager over besides
	// Redfish (every replica computes the same, from its caches).
	Protocols(ctx context.Context, key system.Key) (ManagerProtocols, error)
	// SwitchProtocols turns key's protocols on or off as sw says; what it
	// records every replica and a restarted bridge read.
	SwitchProtocols(ctx context.Context, key system.Key, sw system.ProtocolSwitch) error
}

// ManagerProtocols are a Manager's IPMI and SSH.
type ManagerProtocols struct {
	IPMI, SSH Protocol
}

// Protocol is one protocol of a Manager.
type Protocol struct {
	// Served: the bridge runs the protocol's part (else it is not shown).
	Served bool
	// Enabled: the System is reachable over it now.
	Enabled bool
	// Port is the port it is served on; 0: none.
	Port int
}

// complete reports whether every backend is set (all are required).
func (b Backends) complete() bool {
	return b.Systems != nil && b.Power != nil && b.Boot != nil && b.Media != nil && b.Trust != nil && b.Events != nil && b.Auth != nil
}
