package power

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestJudge: what becomes of a held power-on, on one read.
func TestJudge(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	s := &Service{holdTimeout: 10 * time.Minute}
	slot := func(phase system.MediaPhase, id string) system.MediaSlot {
		return system.MediaSlot{Slot: "cd0", Image: "http://x/a.iso", Phase: phase, InsertID: id, Reason: "404"}
	}
	hold := system.PowerIntent{OnDeferred: true, DeferredAt: t0, Until: t0.Add(time.Minute), Awaits: map[string]string{"cd0": "i1"}}
	for _, tc := range []struct {
		name   string
		intent system.PowerIntent
		slots  map[string]system.MediaSlot
		now    time.Time
		want   verdict
		reason string
	}{
		{"nothing held", system.PowerIntent{}, map[string]system.MediaSlot{"cd0": slot(system.MediaImporting, "i1")}, t0, heldNone, ""},
		{"import in flight", hold, map[string]system.MediaSlot{"cd0": slot(system.MediaImporting, "i1")}, t0, heldWait, ""},
		{"pending", hold, map[string]system.MediaSlot{"cd0": slot(system.MediaPending, "i1")}, t0, heldWait, ""},
		{"imported", hold, map[string]system.MediaSlot{"cd0": slot(system.MediaReady, "i1")}, t0, heldRun, ""},
		{"ejected", hold, nil, t0, heldCancel, "cd0 ejected"},
		{"ejected and inserted again", hold, map[string]system.MediaSlot{"cd0": slot(system.MediaImporting, "i2")}, t0, heldCancel, "cd0 ejected"},
		{"failed", hold, map[string]system.MediaSlot{"cd0": slot(system.MediaFailed, "i1")}, t0, heldDrop, "cd0 failed: 404"},
		{"deadline", hold, map[string]system.MediaSlot{"cd0": slot(system.MediaImporting, "i1")}, t0.Add(time.Minute), heldExpired, "expired"},
		{"deadline beats a finished import", hold, map[string]system.MediaSlot{"cd0": slot(system.MediaReady, "i1")}, t0.Add(2 * time.Minute), heldExpired, "expired"},
		{"record without Until: DeferredAt plus the timeout", system.PowerIntent{OnDeferred: true, DeferredAt: t0},
			map[string]system.MediaSlot{"cd0": slot(system.MediaImporting, "i1")}, t0.Add(10 * time.Minute), heldExpired, "expired"},
		{"record without Awaits waits for any busy slot", system.PowerIntent{OnDeferred: true, DeferredAt: t0},
			map[string]system.MediaSlot{"cd0": slot(system.MediaImporting, "i1")}, t0.Add(time.Minute), heldWait, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := &apply.VM{Key: system.Key{Namespace: "ns", Name: "vm"}, Object: testutil.VM("ns", "vm", "Halted"), Slots: tc.slots, Power: tc.intent}
			got, reason := s.judge(vm, tc.now)
			if got != tc.want || !strings.Contains(reason, tc.reason) || (tc.reason == "") != (reason == "") {
				t.Errorf("judge = %d %q, want %d with %q", got, reason, tc.want, tc.reason)
			}
		})
	}
}

// TestHoldFor: a held power-on awaits the inserts in flight when it was
// held; a repeated On keeps DeferredAt and renews Until.
func TestHoldFor(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 21, 0, 0, 500, time.UTC)
	s := &Service{holdTimeout: 5 * time.Minute}
	vm := &apply.VM{Slots: map[string]system.MediaSlot{
		"cd0":  {Slot: "cd0", Phase: system.MediaImporting, InsertID: "i1"},
		"usb0": {Slot: "usb0", Phase: system.MediaReady, InsertID: "i2"},
	}}
	first := s.holdFor(vm, system.PowerIntent{}, t0)
	want := system.PowerIntent{OnDeferred: true, DeferredAt: t0.Truncate(time.Second), Until: t0.Truncate(time.Second).Add(5 * time.Minute),
		Awaits: map[string]string{"cd0": "i1"}}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("first On (-want +got):\n%s", diff)
	}
	again := s.holdFor(vm, first, t0.Add(time.Minute))
	want.Until = want.Until.Add(time.Minute)
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("repeated On (-want +got):\n%s", diff)
	}
}

// TestStateHeld: a held power-on shows PoweringOn instead of Off until
// its deadline; a record without one shows PoweringOn while held.
func TestStateHeld(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name   string
		intent system.PowerIntent
		want   system.PowerState
	}{
		{"not held", system.PowerIntent{}, system.PowerOff},
		{"dropped", system.PowerIntent{DroppedReason: "virtual media cd0 failed"}, system.PowerOff},
		{"held", system.PowerIntent{OnDeferred: true, Until: now.Add(time.Hour)}, system.PowerPoweringOn},
		{"held, no deadline recorded", system.PowerIntent{OnDeferred: true}, system.PowerPoweringOn},
		{"held past its deadline", system.PowerIntent{OnDeferred: true, Until: now.Add(-time.Second)}, system.PowerOff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := &apply.VM{Object: testutil.VM("ns", "vm", "Halted"), Power: tc.intent}
			if got := State(vm); got != tc.want {
				t.Errorf("State = %s, want %s", got, tc.want)
			}
		})
	}
}
