package eventsource

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/event/registry"
	"github.com/redfish-bridge/redfish-bridge/health"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// state is what the source remembers of one VM: what a client reads of
// it that an event reports a change of.
type state struct {
	uid    string // the VM's
	rv     string // the VM's resourceVersion
	power  system.PowerState
	vmiUID string // the VMI's ("" without one)
	vmiRV  string
	health system.Health
	boot   system.BootProgressState
	// override is the boot override's Enabled: Once turning Disabled is
	// an override consumed.
	override system.BootEnabled
	slots    map[string]system.MediaSlot
}

// stateOf reads what events report of vm.
func stateOf(vm *apply.VM) state {
	s := state{
		uid: string(vm.Object.GetUID()), rv: vm.Object.GetResourceVersion(),
		power: power.State(vm), health: health.Of(vm), boot: health.Progress(vm).LastState,
		override: vm.Boot.Enabled, slots: maps.Clone(vm.Slots),
	}
	if vm.VMI != nil {
		s.vmiUID, s.vmiRV = string(vm.VMI.GetUID()), vm.VMI.GetResourceVersion()
	}
	return s
}

// Redfish URIs of what an event is about.
func systemURI(k system.Key) string { return "/redfish/v1/Systems/" + k.ID() }
func mediaURI(k system.Key, slot string) string {
	return "/redfish/v1/Managers/" + k.ID() + "/VirtualMedia/" + slot
}
func taskURI(id string) string { return "/redfish/v1/TaskService/Tasks/" + id }

// powerMessages is the ResourceEvent message of each PowerState.
var powerMessages = map[system.PowerState]*registry.Message{
	system.PowerOn:          registry.ResourcePoweredOn,
	system.PowerOff:         registry.ResourcePoweredOff,
	system.PowerPoweringOn:  registry.ResourcePoweringOn,
	system.PowerPoweringOff: registry.ResourcePoweringOff,
	system.PowerPaused:      registry.ResourcePaused,
}

// healthMessages is the ResourceEvent message of each Health.
var healthMessages = map[system.Health]*registry.Message{
	system.HealthOK:       registry.ResourceStatusChangedOK,
	system.HealthWarning:  registry.ResourceStatusChangedWarning,
	system.HealthCritical: registry.ResourceStatusChangedCritical,
}

// changes are the events that lead from old to cur of the VM k; old nil
// is a VM not seen before (created), cur nil one gone (removed). Each
// event's ID is a hash of the VM's UID, the version of the object that
// carries the change (the VMI's UID and resourceVersion for what the VMI
// decides, the VM's resourceVersion for what the VM records), the
// MessageId and its arguments: every replica that saw the change in its
// cache names it alike.
func changes(k system.Key, old, cur *state, now time.Time) []event.Event {
	b := builder{key: k, now: now}
	switch {
	case old == nil && cur == nil:
		return nil
	case old == nil:
		b.uid = cur.uid
		b.add(registry.ResourceCreated, systemURI(k), "ComputerSystem", "created")
		return b.out
	case cur == nil:
		b.uid = old.uid
		b.add(registry.ResourceRemoved, systemURI(k), "ComputerSystem", "removed")
		return b.out
	case old.uid != cur.uid: // deleted and created again between two reads
		b.uid = old.uid
		b.add(registry.ResourceRemoved, systemURI(k), "ComputerSystem", "removed")
		b.uid = cur.uid
		b.add(registry.ResourceCreated, systemURI(k), "ComputerSystem", "created")
		return b.out
	}
	b.uid = cur.uid
	vmCause := "vm@" + cur.rv
	vmiCause := vmCause
	switch {
	case cur.vmiUID != "":
		vmiCause = "vmi:" + cur.vmiUID + "@" + cur.vmiRV
	case old.vmiUID != "":
		vmiCause = "vmi:" + old.vmiUID + "@gone"
	}
	if cur.power != old.power {
		if m := powerMessages[cur.power]; m != nil {
			b.add(m, systemURI(k), "ComputerSystem", vmiCause, k.ID())
		}
	}
	if cur.boot != old.boot {
		b.add(registry.ResourceChanged, systemURI(k), "ComputerSystem", vmiCause+"/BootProgress="+string(cur.boot))
	}
	if old.override == system.BootOnce && cur.override != system.BootOnce {
		b.add(registry.ResourceChanged, systemURI(k), "ComputerSystem", vmCause+"/Boot="+string(cur.override))
	}
	if cur.health != old.health {
		if m := healthMessages[cur.health]; m != nil {
			b.add(m, systemURI(k), "ComputerSystem", vmiCause+"/"+vmCause, k.ID(), string(cur.health))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(joinKeys(old.slots, cur.slots))) {
		b.slot(old.slots[id], cur.slots[id], id, vmCause)
	}
	return b.out
}

// slot adds the events of one media slot going from o to c: the slot's
// own (inserted, imported, failed, ejected) and its insert's Task's.
func (b *builder) slot(o, c system.MediaSlot, id, cause string) {
	uri := mediaURI(b.key, id)
	if id == system.HTTPBootSlot {
		uri = systemURI(b.key) // the HttpBootUri image is the System's Boot
	}
	sameInsert := o.InsertID == c.InsertID
	if sameInsert && o.Phase == c.Phase {
		if c.Phase == system.MediaImporting && c.Percent != o.Percent && c.Percent > 0 && c.InsertID != "" {
			b.add(registry.TaskProgressChanged, taskURI(c.InsertID), "Task", cause, c.InsertID, strconv.Itoa(c.Percent))
		}
		return
	}
	if !sameInsert && o.InsertID != "" && o.Phase.Busy() {
		b.add(registry.TaskRemoved, taskURI(o.InsertID), "Task", cause, o.InsertID)
	}
	switch {
	case c.Phase == system.MediaEmpty && o.Phase != system.MediaEmpty:
		b.add(registry.ResourceChanged, uri, resourceType(id), cause+"/ejected")
	case c.Phase.Busy() && (!sameInsert || !o.Phase.Busy()):
		b.add(registry.ResourceChanged, uri, resourceType(id), cause+"/inserted")
		if c.InsertID != "" {
			b.add(registry.TaskStarted, taskURI(c.InsertID), "Task", cause, c.InsertID)
		}
	case c.Phase == system.MediaReady:
		b.add(registry.ResourceStateChanged, uri, resourceType(id), cause, id, "Enabled")
		if c.InsertID != "" {
			b.add(registry.TaskCompletedOK, taskURI(c.InsertID), "Task", cause, c.InsertID)
		}
	case c.Phase == system.MediaFailed:
		b.add(registry.ResourceErrorsDetected, uri, resourceType(id), cause, "Image", c.Reason)
		if c.InsertID != "" {
			b.add(registry.TaskAborted, taskURI(c.InsertID), "Task", cause, c.InsertID)
		}
	}
}

func resourceType(slot string) string {
	if slot == system.HTTPBootSlot {
		return "ComputerSystem"
	}
	return "VirtualMedia"
}

func joinKeys[V any](a, b map[string]V) map[string]struct{} {
	out := make(map[string]struct{}, len(a)+len(b))
	for k := range a {
		out[k] = struct{}{}
	}
	for k := range b {
		out[k] = struct{}{}
	}
	return out
}

// builder collects the events of one VM's change.
type builder struct {
	key system.Key
	uid string
	now time.Time
	out []event.Event
}

// add appends the event m(args) about origin, named by the VM's UID, cause,
// m and args.
func (b *builder) add(m *registry.Message, origin, resourceType, cause string, args ...string) {
	h := sha256.New()
	for _, part := range append([]string{b.uid, cause, m.ID(), origin}, args...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	b.out = append(b.out, event.Event{
		ID:     hex.EncodeToString(h.Sum(nil)[:16]),
		System: b.key, MessageID: m.ID(), Message: m.Format(args...), MessageArgs: args,
		Severity: event.Severity(m.Severity), Origin: origin, ResourceType: resourceType, Time: b.now,
	})
}
