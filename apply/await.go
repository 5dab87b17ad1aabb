package apply

import (
	"context"
	"strconv"
	"time"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// CacheWait bounds how long [Client.Await] waits for the cache to show a
// write: the caller answers anyway (the watch behind the cache normally
// delivers within a few milliseconds).
const CacheWait = 2 * time.Second

// Notifier is a [Cache] that wakes a waiter at a VM's next change
// (inventory.Inventory): Changed returns a channel closed at the next
// change of key the cache shows, and release, called once the waiter
// stops waiting.
type Notifier interface {
	Changed(key system.Key) (changed <-chan struct{}, release func())
}

// Await returns once [Client.Read] of key satisfies done, ctx ends or
// [CacheWait] passes. It reads again only when the cache reports a change
// of key (no polling); without a [Notifier] cache it reads once.
func (c *Client) Await(ctx context.Context, key system.Key, done func(*VM) bool) {
	c.await(ctx, key, func() (*VM, error) { return c.Read(ctx, key) }, done)
}

// AwaitCache is [Client.Await] on the cache alone: done is asked of the VM
// as the cache holds it, not of [Client.Read]'s answer (which may be the
// Client's own write the cache does not show yet, or a live read), so once
// done holds every reader of the cache sees it too (a cache does not go
// back): a Redfish client's next request reads the write back whichever
// resource it asks for (the task of an insert is found by scanning the
// cached Systems). Without a cache it is Await.
func (c *Client) AwaitCache(ctx context.Context, key system.Key, done func(*VM) bool) {
	if c.cache == nil {
		c.Await(ctx, key, done)
		return
	}
	c.await(ctx, key, func() (*VM, error) {
		obj, err := c.cache.VM(key)
		if err != nil {
			return nil, err
		}
		return Decode(ctx, key, obj, c.vmi(ctx, key)), nil
	}, done)
}

// await reads until done holds of a read, woken by the cache's changes of
// key, bounded by ctx and [CacheWait].
func (c *Client) await(ctx context.Context, key system.Key, read func() (*VM, error), done func(*VM) bool) {
	n, _ := c.cache.(Notifier)
	timer := time.NewTimer(CacheWait)
	defer timer.Stop()
	for {
		var changed <-chan struct{}
		release := func() {}
		if n != nil {
			changed, release = n.Changed(key) // before the read: no change is missed
		}
		vm, err := read()
		if (err == nil && done(vm)) || n == nil {
			release()
			return
		}
		select {
		case <-changed:
			release()
		case <-ctx.Done():
			release()
			return
		case <-timer.C:
			release()
			return
		}
	}
}

// AwaitVersion is [Client.Await] for "Read shows written, or newer": a
// writer's next read reads its own write. Read answers with the Client's
// own write while the cache still serves the version it replaced, so this
// usually returns at once. resourceVersions of one apiserver's etcd are
// increasing integers; an unparsable one skips the wait.
func (c *Client) AwaitVersion(ctx context.Context, key system.Key, written *VM) {
	if written == nil || written.Object == nil {
		return
	}
	want, err := strconv.ParseUint(written.Object.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	c.Await(ctx, key, func(vm *VM) bool {
		have, err := strconv.ParseUint(vm.Object.GetResourceVersion(), 10, 64)
		return err != nil || have >= want
	})
}
