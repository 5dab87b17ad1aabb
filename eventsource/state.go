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
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
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
	// vmiLive: the VMI is neither final nor being deleted, so an On or a
	// PoweringOn can be about it.
	vmiLive bool
	// lastVMI is the UID of the VMI the VM had last (vmiUID, or the one
	// before it ended): what an Off is the end of.
	lastVMI string
	health  system.Health
	boot    system.BootProgressState
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
		s.lastVMI = s.vmiUID
		s.vmiLive = kubevirt.Live(vm.VMI)
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
// is a VM not seen before (created), cur nil one gone (removed). It
// carries old's lastVMI into cur when cur has no VMI.
//
// Each event's ID is a hash of the VM's UID, what names the change, the
// MessageId and its arguments, the same on every replica whatever order
// its caches showed the VM's and the VMI's versions in: a power state,
// BootProgress or consumed override by the VMI it concerns (a VMI powers
// off once, boots once: its UID and the new value name the change; a
// pause and its end by the VMI's resourceVersion), a media change by its
// insert (each insert passes each phase once), a System by its UID. An
// On read without a live VMI (a start or guest reboot the bridge follows,
// before the next VMI shows in this replica's cache) is not published
// until the VMI it is about is seen: a replica whose VMI cache lags would
// otherwise name it by the VMI that ended. A PoweringOn without a live VMI
// (a start accepted, not yet acted on) is named by the versions read. Only
// a health change is named by the versions read (the VM's and the VMI's
// resourceVersions): it may come back within one VMI, so a replica that
// read it at other versions publishes a duplicate, never one ID for two
// changes.
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
	if cur.lastVMI == "" {
		cur.lastVMI = old.lastVMI
	}
	vmi := "vmi:" + cur.lastVMI
	versions := "vm@" + cur.rv + "/vmi@" + cur.vmiUID + "@" + cur.vmiRV
	if cur.power == system.PowerOn && !cur.vmiLive {
		cur.power = old.power // published once the VMI it is about is seen
	}
	if cur.power != old.power {
		cause := vmi + "/" + string(cur.power)
		switch {
		case cur.power == system.PowerPaused || old.power == system.PowerPaused || cur.lastVMI == "",
			cur.power == system.PowerPoweringOn && !cur.vmiLive:
			cause = versions
		}
		if m := powerMessages[cur.power]; m != nil {
			b.add(m, systemURI(k), "ComputerSystem", cause, k.ID())
		}
	}
	if cur.boot != old.boot {
		b.add(registry.ResourceChanged, systemURI(k), "ComputerSystem", vmi+"/BootProgress="+string(cur.boot))
	}
	if old.override == system.BootOnce && cur.override != system.BootOnce {
		b.add(registry.ResourceChanged, systemURI(k), "ComputerSystem", vmi+"/Boot="+string(cur.override))
	}
	if cur.health != old.health {
		if m := healthMessages[cur.health]; m != nil {
			b.add(m, systemURI(k), "ComputerSystem", versions, k.ID(), string(cur.health))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(joinKeys(old.slots, cur.slots))) {
		b.slot(old.slots[id], cur.slots[id], id)
	}
	return b.out
}

// slot adds the events of one media slot going from o to c: the slot's
// own (inserted, imported, failed, ejected) and its insert's Task's,
// each named by the insert and the phase it entered.
func (b *builder) slot(o, c system.MediaSlot, id string) {
	cause := "insert:" + c.InsertID + "/" + string(c.Phase)
	uri := mediaURI(b.key, id)
	if id == system.HTTPBootSlot {
		uri = systemURI(b.key) // the HttpBootUri image is the System's Boot
	}
	sameInsert := o.InsertID == c.InsertID
	if sameInsert && o.Phase == c.Phase {
		if c.Phase == system.MediaImporting && c.Percent != o.Percent && c.Percent > 0 && c.InsertID != "" {
			b.add(registry.TaskProgressChanged, taskURI(c.InsertID), "Task", cause+"/"+strconv.Itoa(c.Percent), c.InsertID, strconv.Itoa(c.Percent))
		}
		return
	}
	if !sameInsert && o.InsertID != "" && o.Phase.Busy() {
		b.add(registry.TaskRemoved, taskURI(o.InsertID), "Task", "insert:"+o.InsertID+"/removed", o.InsertID)
	}
	switch {
	case c.Phase == system.MediaEmpty && o.Phase != system.MediaEmpty:
		b.add(registry.ResourceChanged, uri, resourceType(id), "insert:"+o.InsertID+"/ejected")
	case c.Phase.Busy() && (!sameInsert || !o.Phase.Busy()):
		b.add(registry.ResourceChanged, uri, resourceType(id), "insert:"+c.InsertID+"/inserted")
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
