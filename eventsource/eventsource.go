package eventsource

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Source publishes the events of the VMs in an inventory on a bus.
type Source struct {
	inv *inventory.Inventory
	bus *event.Bus
	// seen is the last state read of each VM; only Start touches it.
	seen map[system.Key]*state
	// now is the clock of the events' Time (tests set it).
	now   func() time.Time
	ready chan struct{} // closed once Start reads every VM's changes
}

// New builds a source of the VMs in inv publishing on bus.
func New(inv *inventory.Inventory, bus *event.Bus) *Source {
	return &Source{inv: inv, bus: bus, seen: map[system.Key]*state{}, now: time.Now, ready: make(chan struct{})}
}

// Add builds the source of inv's VMs publishing on bus and adds it to
// mgr's Servers group: every replica publishes every event on its own
// bus, and is ready (serves its LogServices and streams) only once its
// source reads every change.
func Add(mgr *manager.Manager, inv *inventory.Inventory, bus *event.Bus) error {
	if err := mgr.Add(New(inv, bus), manager.Servers); err != nil {
		return fmt.Errorf("event source: %w", err)
	}
	return nil
}

// WaitReady returns once the source read every cached VM and watches
// their changes (a change from then on is published).
func (s *Source) WaitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Start publishes the events of every VM change until ctx ends. It first
// reads what every cached VM is now: that is the ground its events are
// changes from, not a flood of ResourceCreated. The inventory then
// replays what it holds to the handler: a VM that changed since it was
// read publishes that change, one that did not publishes nothing.
func (s *Source) Start(ctx context.Context) error {
	vms, err := s.inv.ListVMs("", nil)
	if err != nil {
		return fmt.Errorf("event source: %w", err)
	}
	for _, vm := range vms {
		k := system.Key{Namespace: vm.GetNamespace(), Name: vm.GetName()}
		st, err := s.read(ctx, k)
		if err != nil {
			return err
		}
		if st != nil {
			s.seen[k] = st
		}
	}
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[system.Key]{Name: "eventsource"})
	remove, err := s.inv.AddVMHandler(func(k system.Key) { q.Add(k) })
	if err != nil {
		q.ShutDown()
		return fmt.Errorf("event source: %w", err)
	}
	close(s.ready)
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	defer func() {
		if err := remove(); err != nil {
			logctx.From(ctx).WarnContext(ctx, "event source: remove VM handler", "err", err)
		}
	}()
	for {
		k, shutdown := q.Get()
		if shutdown {
			return nil
		}
		s.sync(ctx, k)
		q.Done(k)
	}
}

// sync publishes the events of k's change since it was last read.
func (s *Source) sync(ctx context.Context, k system.Key) {
	cur, err := s.read(ctx, k)
	if err != nil {
		logctx.From(ctx).WarnContext(ctx, "event source: read VM", "vm", k, "err", err)
		return
	}
	evs := changes(k, s.seen[k], cur, s.now())
	logctx.From(ctx).DebugContext(ctx, "event source: VM changed", "vm", k, "events", len(evs))
	for _, e := range evs {
		s.bus.Publish(e)
	}
	if cur == nil {
		delete(s.seen, k)
	} else {
		s.seen[k] = cur
	}
}

// read is k's state in the caches; nil when the VM is not there.
func (s *Source) read(ctx context.Context, k system.Key) (*state, error) {
	obj, err := s.inv.VM(k)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("event source: %w", err)
	}
	var vmi *unstructured.Unstructured
	switch v, err := s.inv.VMI(k); {
	case err == nil:
		vmi = v
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("event source: %w", err)
	}
	st := stateOf(apply.Decode(ctx, k, obj, vmi))
	return &st, nil
}
