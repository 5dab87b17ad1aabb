package power

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// A held power-on (OnDeferred) is a power-on that arrived while an import
// was in flight. While held, the System shows PoweringOn, so a client sees
// that the power-on is still coming: Ironic 21.4 (and sushy) count
// PoweringOn as powered on and go on with their flow, as with a real BMC
// whose guest is still reading its virtual media. It runs when the inserts
// it awaits are imported, and never once nobody expects it:
//
//   - a power-off (ForceOff, GracefulShutdown, PushPowerButton while held)
//     clears it: the client changed its mind;
//   - an eject of an insert it awaits (or another insert into that slot)
//     cancels it: what was to boot is gone, and starting the VM anyway
//     would boot something the client did not set up; the System shows Off
//     again, so a client that still wants it on says On again (Ironic's
//     power-state sync does);
//   - a failed import drops it (DroppedReason, Status.Health Warning);
//   - its deadline, Until (the last On plus [DefaultHoldTimeout] or the
//     bridge's --held-power-on-timeout), drops it (DroppedReason, Health
//     Warning, a log line): a client that gave up without saying Off does
//     not get a VM that starts by itself minutes later.
//
// Each is decided on the fresh read a write is preconditioned on, so a
// power-off, eject or deadline that lands between the reconciler's read
// and its start wins.

// DefaultHoldTimeout is how long a power-on is held behind an import by
// default: past the 60 s Ironic 21.4 waits for a power state by default
// (power_state_change_timeout), and long enough for a large ISO from a
// slow image server.
const DefaultHoldTimeout = 10 * time.Minute

// SetHoldTimeout sets how long a power-on may be held behind an import
// (d > 0; the default is [DefaultHoldTimeout]). It applies to power-ons
// held after the call. Call it before serving.
func (s *Service) SetHoldTimeout(d time.Duration) {
	if d > 0 {
		s.holdTimeout = d
	}
}

// holdFor is the intent recording a power-on held at now behind vm's busy
// slots: a repeated On keeps DeferredAt and renews Until.
func (s *Service) holdFor(vm *apply.VM, prev system.PowerIntent, now time.Time) system.PowerIntent {
	now = now.UTC().Truncate(time.Second)
	h := system.PowerIntent{OnDeferred: true, DeferredAt: now, Until: now.Add(s.holdTimeout), Awaits: map[string]string{}}
	if prev.OnDeferred && !prev.DeferredAt.IsZero() {
		h.DeferredAt = prev.DeferredAt
	}
	for id, sl := range vm.Slots {
		if sl.Phase.Busy() {
			h.Awaits[id] = sl.InsertID
		}
	}
	return h
}

// holdDeadline is when vm's held power-on expires.
func (s *Service) holdDeadline(p system.PowerIntent) time.Time {
	if !p.Until.IsZero() {
		return p.Until
	}
	return p.DeferredAt.Add(s.holdTimeout)
}

// verdict is what becomes of a held power-on.
type verdict int

const (
	heldNone    verdict = iota // nothing is held
	heldWait                   // an awaited import is in flight
	heldRun                    // every import is done: power on
	heldCancel                 // an awaited insert was ejected: clear, no reason
	heldDrop                   // an import failed: clear with a reason
	heldExpired                // the deadline passed: clear with a reason
)

// judge decides vm's held power-on at now; reason explains a cancel or a
// drop.
func (s *Service) judge(vm *apply.VM, now time.Time) (v verdict, reason string) {
	p := vm.Power
	if !p.OnDeferred {
		return heldNone, ""
	}
	if deadline := s.holdDeadline(p); !now.Before(deadline) {
		return heldExpired, fmt.Sprintf("held power-on expired at %s (held since %s, timeout %s) before its media import completed",
			deadline.UTC().Format(time.RFC3339), p.DeferredAt.UTC().Format(time.RFC3339), s.holdTimeout)
	}
	for _, slot := range slices.Sorted(maps.Keys(p.Awaits)) {
		if cur := vm.Slots[slot]; cur.InsertID != p.Awaits[slot] {
			return heldCancel, fmt.Sprintf("virtual media %s ejected", slot)
		}
	}
	if sl, failed := failedSlot(vm); failed {
		return heldDrop, fmt.Sprintf("virtual media %s failed: %s", sl.Slot, sl.Reason)
	}
	if _, busy := busySlot(vm); busy {
		return heldWait, ""
	}
	return heldRun, ""
}

// held: vm records a power-on held behind an import that has not expired
// by now (the System shows PoweringOn).
func held(vm *apply.VM, now time.Time) bool {
	p := vm.Power
	return p.OnDeferred && (p.Until.IsZero() || now.Before(p.Until))
}
