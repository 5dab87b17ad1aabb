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
	return &state{uid: "u1", rv: "10", power: system.PowerOn, vmiUID: "i1", vmiRV: "5", health: system.HealthOK,
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

// TestIDs: the ID depends on the change (the object version carrying it),
// not on who computed it or when: two replicas' reads of one version name
// it alike; another version of the same transition is another event.
func TestIDs(t *testing.T) {
	off := func(vmiRV string) *state {
		s := running()
		s.power, s.vmiRV = system.PowerOff, vmiRV
		return s
	}
	a := changes(key, running(), off("6"), time.Unix(1, 0))
	b := changes(key, running(), off("6"), time.Unix(2, 0))
	c := changes(key, running(), off("7"), time.Unix(1, 0))
	if a[0].ID != b[0].ID {
		t.Errorf("one change read twice: IDs %s and %s", a[0].ID, b[0].ID)
	}
	if a[0].ID == c[0].ID {
		t.Errorf("two versions share ID %s", a[0].ID)
	}
	if a[0].Message != "The resource `ns.vm` has powered off." || a[0].Severity != event.SeverityOK || a[0].ResourceType != "ComputerSystem" {
		t.Errorf("event %+v", a[0])
	}
}
