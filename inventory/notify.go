package inventory

import (
	"sync"

	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Changed returns a channel closed at the next change of key's VM or VMI
// the caches show (added, updated or deleted; an informer handler runs
// after the cache took the change), and release, to call once the caller
// stops waiting. It is how a writer waits for the cache to show its own
// write without polling: take the channel, then read, then wait on the
// channel if the read is still behind. No goroutine is started; a
// channel's entry is dropped at its change or its last release.
func (inv *Inventory) Changed(key system.Key) (changed <-chan struct{}, release func()) {
	return inv.changes.changed(key)
}

// changes wakes the waiters on a VM's next change.
type changes struct {
	mu sync.Mutex
	m  map[system.Key]*change
}

type change struct {
	ch      chan struct{}
	waiters int
}

func (c *changes) changed(key system.Key) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[system.Key]*change{}
	}
	e := c.m[key]
	if e == nil {
		e = &change{ch: make(chan struct{})}
		c.m[key] = e
	}
	e.waiters++
	var once sync.Once
	return e.ch, func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			e.waiters--
			if e.waiters == 0 && c.m[key] == e {
				delete(c.m, key)
			}
		})
	}
}

// notify wakes key's waiters.
func (c *changes) notify(key system.Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil {
		close(e.ch)
		delete(c.m, key)
	}
}

// waiting is the number of keys waited on (tests).
func (c *changes) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// notifyHandler feeds changes from a VM or VMI informer.
func (inv *Inventory) notifyHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(inv.changes.notify, obj) },
		UpdateFunc: func(_, obj any) { enqueue(inv.changes.notify, obj) },
		DeleteFunc: func(obj any) { enqueue(inv.changes.notify, obj) },
	}
}
