package apply

// What media/ and power/ see of apply: the field manager names, the
// annotation keys holding each concern's state, the decoded VM read, the
// change functions each concern hands to the [Writer], and the Writer
// itself ([Client] implements it).

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Field manager names. Stable: they appear in every VM's managedFields.
const (
	ManagerMedia = "redfish-media"
	ManagerBoot  = "redfish-boot"
	ManagerPower = "redfish-power"
	// ManagerProtocols records an administrator's switches of a System's
	// IPMI and SSH (the Manager's NetworkProtocol PATCH).
	ManagerProtocols = "redfish-protocols"
)

// Managers are every field manager of the bridge: a new one is added here
// (fields' ownership check and inventory's kept managedFields follow it;
// inventory's TestBridgeManagersAreApplys checks the latter).
var Managers = []string{ManagerMedia, ManagerBoot, ManagerPower, ManagerProtocols}

// Annotation keys holding each concern's state on the VM.
const (
	AnnotationMediaPrefix = "redfish-bridge.io/media." // + slot id
	AnnotationBoot        = "redfish-bridge.io/boot"
	AnnotationPower       = "redfish-bridge.io/power"
	AnnotationProtocols   = "redfish-bridge.io/protocols"
)

// Mode is how the installed CRD declares disks/volumes/interfaces.
type Mode string

// List modes.
const (
	ModeMap    Mode = "map"
	ModeAtomic Mode = "atomic"
)

// ErrNoChange is what a change function returns to mean "nothing to write".
// A Writer confirms it on a live read before believing it: a cached read
// may be behind, so the change runs again on the apiserver's version.
var ErrNoChange = errors.New("no change")

// VM is one read of a VirtualMachine with the bridge's state decoded.
type VM struct {
	Key    system.Key
	Object *unstructured.Unstructured // as read; do not modify
	// VMI is the VirtualMachineInstance as read from the cache, nil if none.
	VMI   *unstructured.Unstructured
	Slots map[string]system.MediaSlot
	Boot  system.BootOverride
	Power system.PowerIntent
	// Protocols are the protocols an administrator switched off.
	Protocols system.Protocols
	// managed are Object's managedFields when the cache kept them aside
	// (managedAside): the cached object carries none.
	managed      []metav1.ManagedFieldsEntry
	managedAside bool
	// decisions keeps [ValidateLegacy]'s answer beside managed, per
	// version (the cache's; nil: decided afresh).
	decisions DecisionCache
}

// PowerChange is the power concern's complete intent.
type PowerChange struct {
	RunStrategy kubevirt.RunStrategyValue // "" keeps the current one
	Intent      system.PowerIntent
}

// MediaChange edits the complete media intent (all slots) given a fresh read.
// It may run more than once (retries) and must depend only on its arguments.
type MediaChange func(vm *VM, slots map[string]system.MediaSlot) error

// BootChange edits the boot override given a fresh read.
type BootChange func(vm *VM, boot *system.BootOverride) error

// PowerChangeFunc edits the power intent given a fresh read.
type PowerChangeFunc func(vm *VM, p *PowerChange) error

// Writer applies each concern's intent. See the package doc for ownership,
// preconditions, force and retries.
type Writer interface {
	// Read returns the VM (and VMI) from the informer cache.
	Read(ctx context.Context, key system.Key) (*VM, error)
	Media(ctx context.Context, key system.Key, change MediaChange) (*VM, error)
	Boot(ctx context.Context, key system.Key, change BootChange) (*VM, error)
	Power(ctx context.Context, key system.Key, change PowerChangeFunc) (*VM, error)
}

// ErrInvalid wraps a value outside the Redfish enums the bridge honours.
var ErrInvalid = errors.New("invalid value")
