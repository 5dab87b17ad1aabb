package eventlog

import (
	"fmt"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

var (
	vm1 = system.Key{Namespace: "ns", Name: "vm1"}
	vm2 = system.Key{Namespace: "ns", Name: "vm2"}
)

func ids(es []event.Event) string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return fmt.Sprint(out)
}

// TestBoundedPerSystem: each System keeps its newest entries; one
// System's flood does not push another's out; Clear empties one System.
func TestBoundedPerSystem(t *testing.T) {
	l := New(&event.Bus{}, 3)
	l.record(event.Event{ID: "b0", System: vm2})
	for i := range 10 {
		l.record(event.Event{ID: fmt.Sprint("a", i), System: vm1})
	}
	l.record(event.Event{ID: "test"}) // no System: logged nowhere
	if got := ids(l.Entries(vm1)); got != "[a7 a8 a9]" {
		t.Errorf("vm1 log %s, want the newest 3", got)
	}
	if got := ids(l.Entries(vm2)); got != "[b0]" {
		t.Errorf("vm2 log %s, want [b0]", got)
	}
	l.Clear(vm1)
	if got := ids(l.Entries(vm1)); got != "[]" {
		t.Errorf("vm1 after Clear: %s", got)
	}
	if got := ids(l.Entries(vm2)); got != "[b0]" {
		t.Errorf("vm2 after vm1's Clear: %s", got)
	}
}

// TestFallsBehindAndResubscribes: a log whose subscription overflowed
// subscribes again and records what comes next.
func TestFallsBehindAndResubscribes(t *testing.T) {
	bus := &event.Bus{}
	l := New(bus, 3)
	for i := range busBuffer + 1 { // the bus ends the log's subscription
		bus.Publish(event.Event{ID: fmt.Sprint(i), System: vm1})
	}
	go func() { _ = l.Start(t.Context()) }()
	testutil.Eventually(t, "the log to subscribe again", 10*time.Second, 5*time.Millisecond,
		testutil.True(func() bool { return bus.Subscribers() == 1 && len(l.Entries(vm1)) == 3 }))
	bus.Publish(event.Event{ID: "after", System: vm2})
	testutil.Eventually(t, "the event after the overflow", 10*time.Second, 5*time.Millisecond,
		testutil.True(func() bool { return ids(l.Entries(vm2)) == "[after]" }))
}
