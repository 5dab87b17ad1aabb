package eventsource

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/system"
)

var key = system.Key{Namespace: "ns", Name: "vm"}

func running() *state {
	return &state{uid: "u1", rv: "10", power: system.PowerOn, vmiUID: "i1", vmiRV: "5", lastVMI: "i1", vmiLive: true, health: system.HealthOK,
		boot: system.BootProgressOSBootStarted, slots: map[string]system.MediaSlot{}}
}

// msgs is what changes(old, cur) publishes: MessageId about Origin.
func msgs(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.MessageID+" "+e.Origin)
	}
	return out
}

func TestChanges(t *testing.T) {
	const sys = "/redfish/v1/Systems/ns.vm"
	const cd = "/redfish/v1/Managers/ns.vm/VirtualMedia/cd0"
	for _, tc := range []struct {
		name string
		old  *state
		edit func(*state) *state
		want []string
	}{
		{"created", nil, func(s *state) *state { return s }, []string{"ResourceEvent.1.3.0.ResourceCreated " + sys}},
		{"removed", running(), func(*state) *state { return nil }, []string{"ResourceEvent.1.3.0.ResourceRemoved " + sys}},
		{"nothing changed", running(), func(s *state) *state { s.rv = "11"; return s }, nil},
		{"guest shutdown", running(), func(s *state) *state {
			s.power, s.vmiRV, s.boot = system.PowerOff, "6", system.BootProgressNone
			return s
		}, []string{"ResourceEvent.1.3.0.ResourcePoweredOff " + sys, "ResourceEvent.1.3.0.ResourceChanged " + sys}},
		{"powering off", running(), func(s *state) *state { s.power = system.PowerPoweringOff; return s },
			[]string{"ResourceEvent.1.3.0.ResourcePoweringOff " + sys}},
		{"paused", running(), func(s *state) *state { s.power = system.PowerPaused; return s },
			[]string{"ResourceEvent.1.3.0.ResourcePaused " + sys}},
		{"health critical", running(), func(s *state) *state { s.health = system.HealthCritical; return s },
			[]string{"ResourceEvent.1.3.0.ResourceStatusChangedCritical " + sys}},
		{"Once override consumed", func() *state { s := running(); s.override = system.BootOnce; return s }(),
			func(s *state) *state { s.override = system.BootDisabled; return s },
			[]string{"ResourceEvent.1.3.0.ResourceChanged " + sys}},
		{"media inserted", running(), func(s *state) *state {
			s.slots = map[string]system.MediaSlot{"cd0": {Slot: "cd0", Phase: system.MediaPending, InsertID: "t1"}}
			return s
		}, []string{"ResourceEvent.1.3.0.ResourceChanged " + cd, "TaskEvent.1.0.3.TaskStarted /redfish/v1/TaskService/Tasks/t1"}},
		{"media imported", withSlot(system.MediaImporting), func(s *state) *state { s.slots = slot(system.MediaReady); return s },
			[]string{"ResourceEvent.1.3.0.ResourceStateChanged " + cd, "TaskEvent.1.0.3.TaskCompletedOK /redfish/v1/TaskService/Tasks/t1"}},
		{"media failed", withSlot(system.MediaImporting), func(s *state) *state { s.slots = slot(system.MediaFailed); return s },
			[]string{"ResourceEvent.1.3.0.ResourceErrorsDetected " + cd, "TaskEvent.1.0.3.TaskAborted /redfish/v1/TaskService/Tasks/t1"}},
		{"media ejected", withSlot(system.MediaReady), func(s *state) *state { s.slots = nil; return s },
			[]string{"ResourceEvent.1.3.0.ResourceChanged " + cd}},
		{"import progress", withSlot(system.MediaImporting), func(s *state) *state {
			s.slots = slot(system.MediaImporting)
			sl := s.slots["cd0"]
			sl.Percent = 40
			s.slots["cd0"] = sl
			return s
		}, []string{"TaskEvent.1.0.3.TaskProgressChanged /redfish/v1/TaskService/Tasks/t1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cur *state
			if tc.old != nil {
				c := *tc.old
				cur = tc.edit(&c)
			} else {
				cur = tc.edit(running())
			}
			if diff := cmp.Diff(tc.want, msgs(changes(key, tc.old, cur, time.Time{}))); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func slot(p system.MediaPhase) map[string]system.MediaSlot {
	return map[string]system.MediaSlot{"cd0": {Slot: "cd0", Phase: p, InsertID: "t1", Reason: "boom"}}
}

func withSlot(p system.MediaPhase) *state {
	s := running()
	s.slots = slot(p)
	return s
}

// TestIDs: the ID names the change, not who computed it, when, or at
// which versions its caches showed it: two replicas' reads of one VMI's
// end name it alike, whether they saw the VMI Succeeded or already gone;
// another VMI's end, or a second pause of one VMI, is another event.
func TestIDs(t *testing.T) {
	off := func(vmiUID, vmiRV string) *state {
		s := running()
		s.power, s.vmiUID, s.vmiRV, s.lastVMI, s.vmiLive = system.PowerOff, vmiUID, vmiRV, vmiUID, false // as stateOf: "" when gone
		return s
	}
	succeeded := changes(key, running(), off("i1", "6"), time.Unix(1, 0))
	gone := changes(key, running(), off("", ""), time.Unix(2, 0))
	if succeeded[0].ID != gone[0].ID {
		t.Errorf("one VMI's end read as Succeeded and as gone: IDs %s and %s", succeeded[0].ID, gone[0].ID)
	}
	next := running()
	next.vmiUID, next.lastVMI = "i2", "i2"
	other := changes(key, next, off("i2", "9"), time.Unix(1, 0))
	if other[0].ID == succeeded[0].ID {
		t.Errorf("two VMIs' ends share ID %s", other[0].ID)
	}
	pause := func(rv string) string {
		s := running()
		s.power, s.vmiRV = system.PowerPaused, rv
		return changes(key, running(), s, time.Time{})[0].ID
	}
	if pause("6") == pause("8") {
		t.Error("two pauses of one VMI share an ID")
	}
	if succeeded[0].Message != "The resource `ns.vm` has powered off." || succeeded[0].Severity != event.SeverityOK || succeeded[0].ResourceType != "ComputerSystem" {
		t.Errorf("event %+v", succeeded[0])
	}
}

// TestOnNamedByItsVMI: an On through a start the bridge follows reads On
// before the next VMI runs; one replica's VMI cache may still hold none
// (or the VMI that ended) when another's holds the next one pending. Both
// must publish one On under one ID: the lagging one when it sees the VMI.
// Without the wait: the lagging replica named the On by the VMI that ended.
func TestOnNamedByItsVMI(t *testing.T) {
	off := running()
	off.power, off.vmiUID, off.vmiRV, off.vmiLive = system.PowerOff, "", "", false // lastVMI i1: the end it was
	next := func(vmiUID, vmiRV string, live bool) *state {
		s := *off
		s.power, s.rv, s.vmiUID, s.vmiRV, s.vmiLive = system.PowerOn, "12", vmiUID, vmiRV, live
		if vmiUID != "" {
			s.lastVMI = vmiUID
		}
		return &s
	}
	// Replica b: its VMI cache holds nothing yet, then i2 pending.
	lag := next("", "", false)
	if evs := changes(key, off, lag, time.Time{}); len(evs) != 0 {
		t.Fatalf("an On read without its VMI published %v, want nothing until the VMI is seen", msgs(evs))
	}
	b := changes(key, lag, next("i2", "7", true), time.Time{})
	// Replica c: i2 pending at once.
	c := changes(key, off, next("i2", "8", true), time.Time{})
	if len(b) != 1 || len(c) != 1 {
		t.Fatalf("replica b published %v, replica c %v: want one On each", msgs(b), msgs(c))
	}
	if b[0].ID != c[0].ID || b[0].MessageID != "ResourceEvent.1.3.0.ResourcePoweredOn" {
		t.Errorf("one On: replica b %s %s, replica c %s %s: want one ID", b[0].MessageID, b[0].ID, c[0].MessageID, c[0].ID)
	}
	// Replica d: the VMI that ended still in its cache, Succeeded.
	stale := next("i1", "6", false)
	if evs := changes(key, off, stale, time.Time{}); len(evs) != 0 {
		t.Errorf("an On read beside the VMI that ended published %v, want nothing", msgs(evs))
	}
}
