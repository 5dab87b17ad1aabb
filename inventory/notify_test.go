package inventory

import (
	"testing"

	"github.com/redfish-bridge/redfish-bridge/system"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestChanges: a waiter's channel closes at its key's change and no other,
// a change wakes every waiter of the key, and no entry outlives its change
// or its waiters' release (a waiter that gives up leaks nothing).
func TestChanges(t *testing.T) {
	a, b := system.Key{Namespace: "ns", Name: "a"}, system.Key{Namespace: "ns", Name: "b"}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, c *changes)
	}{
		{"wakes on its key's change", func(t *testing.T, c *changes) {
			ch1, rel1 := c.changed(a)
			ch2, rel2 := c.changed(a)
			chB, relB := c.changed(b)
			c.notify(a)
			if !closed(ch1) || !closed(ch2) || closed(chB) {
				t.Errorf("after a's change: a's waiters woken %v %v, b's %v; want true true false", closed(ch1), closed(ch2), closed(chB))
			}
			rel1()
			rel2()
			relB()
		}},
		{"a new wait after a change waits for the next", func(t *testing.T, c *changes) {
			_, rel := c.changed(a)
			c.notify(a)
			rel()
			ch, rel := c.changed(a)
			defer rel()
			if closed(ch) {
				t.Error("a wait begun after the change is already woken")
			}
		}},
		{"release drops the entry with its last waiter", func(t *testing.T, c *changes) {
			_, rel1 := c.changed(a)
			_, rel2 := c.changed(a)
			rel1()
			rel1() // idempotent
			if n := c.waiting(); n != 1 {
				t.Errorf("one waiter left: %d keys waited on, want 1", n)
			}
			rel2()
		}},
		{"a change with no waiter", func(t *testing.T, c *changes) { c.notify(b) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c changes
			tc.run(t, &c)
			if n := c.waiting(); n != 0 {
				t.Errorf("%d keys still waited on after every waiter released, want 0", n)
			}
		})
	}
}
