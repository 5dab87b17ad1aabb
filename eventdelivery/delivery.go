package eventdelivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// VMs are the cached VirtualMachines (inventory.Inventory), read for
// the labels an owner's scope selects on.
type VMs interface {
	VM(key system.Key) (*unstructured.Unstructured, error)
}

// Deps are what the delivery reads and writes.
type Deps struct {
	Bus *event.Bus
	// Kube and Namespace are where the subscriptions' Secret
	// ([Config.Secret]) is watched.
	Kube      kubernetes.Interface
	Namespace string
	// Subs, if set, is the watch of that Secret the replica already holds
	// (its caches'); nil: the delivery watches it for its term.
	Subs *eventsub.Watcher
	// Store applies a subscription's policy when it gives up.
	Store *eventsub.Store
	Users auth.Users
	VMs   VMs
	// Observe, if set, is told of every attempt (err nil: delivered).
	Observe func(sub string, e event.Event, err error, took time.Duration)
	// Listening, if set, is called once the delivery receives the bus's
	// events: every event published from then on is delivered.
	Listening func()
	// NoReplay, set, starts each term with the live events only (no
	// replay of what the last term may not have delivered).
	NoReplay bool
}

// Delivery is the Leader part posting the bus's events to the
// subscriptions.
type Delivery struct {
	Deps
	cfg    Config
	poster *poster
}

// busBuffer is how many events the delivery's bus subscription holds
// before it is ended with event.ErrOverflow (dispatching one event only
// queues it, so it stays far behind this).
const busBuffer = 1 << 16

// New returns the delivery.
func New(cfg Config, deps Deps) (*Delivery, error) {
	if deps.Bus == nil || deps.Kube == nil || deps.Store == nil || deps.Users == nil || deps.VMs == nil {
		return nil, errors.New("event delivery: bus, kube client, store, users and VMs are required")
	}
	if cfg.QueueSize < 1 {
		return nil, fmt.Errorf("event delivery: queue size %d, want at least 1", cfg.QueueSize)
	}
	if cfg.MarkInterval <= 0 {
		cfg.MarkInterval = DefaultConfig().MarkInterval
	}
	return &Delivery{Deps: deps, cfg: cfg, poster: newPoster(cfg.AddrPolicy, cfg.Timeout)}, nil
}

// Add builds the delivery and adds it to mgr's Leader group: one replica
// delivers each event.
func Add(mgr *manager.Manager, cfg Config, deps Deps) error {
	d, err := New(cfg, deps)
	if err != nil {
		return err
	}
	if err := mgr.Add(d, manager.Leader); err != nil {
		return fmt.Errorf("event delivery: %w", err)
	}
	return nil
}

// Start implements manager.Part: it replays to each subscription the
// events its last term may not have delivered (package doc, "replay"),
// then delivers the events published from now until ctx ends, recording
// how far it got every [Config.MarkInterval] and when the term ends.
func (d *Delivery) Start(ctx context.Context) error {
	log := logctx.From(ctx).With("part", "event-delivery")
	ctx = logctx.Into(ctx, log)
	// Before the watch: nothing published from now is missed, nothing
	// held is also live.
	bus, held := d.Bus.SubscribeHistory(busBuffer)
	defer bus.Close()
	if d.Listening != nil {
		d.Listening()
	}
	subs := d.Subs
	if subs == nil {
		var err error
		if subs, err = eventsub.Watch(ctx, d.Kube, d.Namespace, d.cfg.Secret); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("event delivery: %w", err)
		}
	}
	senders := map[string]*sender{}
	saved := map[string]string{}
	defer func() {
		for _, sn := range senders {
			sn.stop()
			<-sn.done
		}
		// The term ended: record how far it got for the next leader.
		end, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.Timeout)
		defer cancel()
		d.saveMarks(end, senders, saved)
	}()
	if !d.NoReplay {
		d.replay(ctx, held, subs.Subscriptions(), senders)
	}
	marks := time.NewTicker(d.cfg.MarkInterval)
	defer marks.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-marks.C:
			d.saveMarks(ctx, senders, saved)
		case e, ok := <-bus.C:
			if !ok {
				if ctx.Err() != nil || errors.Is(bus.Err(), event.ErrClosed) {
					return nil
				}
				log.ErrorContext(ctx, "event delivery fell behind the bus: events were lost", "error", bus.Err())
				bus = d.Bus.Subscribe(busBuffer)
				continue
			}
			d.dispatch(ctx, e, time.Now(), subs.Subscriptions(), senders)
		}
	}
}

// saveMarks records the senders' last delivered events that saved (by
// subscription, the IDs last recorded) does not have yet, in one write.
func (d *Delivery) saveMarks(ctx context.Context, senders map[string]*sender, saved map[string]string) {
	marks := map[string]eventsub.Mark{}
	for id, sn := range senders {
		if m, ok := sn.lastDelivered(); ok && saved[id] != m.ID {
			marks[id] = m
		}
	}
	if len(marks) == 0 {
		return
	}
	if err := d.Store.SetDelivered(ctx, marks); err != nil {
		logctx.From(ctx).WarnContext(ctx, "record the events delivered (a next leader replays more)", "error", err.Error())
		return
	}
	for id, m := range marks {
		saved[id] = m.ID
	}
}

// dispatch queues e (published at this replica's time published) for
// every enabled subscription that matches it and whose owner may read
// its System, starting and stopping senders as subscriptions come and
// go.
func (d *Delivery) dispatch(ctx context.Context, e event.Event, published time.Time, subs []eventsub.Subscription, senders map[string]*sender) {
	live := make(map[string]bool, len(subs))
	scopes := map[string]*auth.Scope{}
	for i := range subs {
		s := &subs[i]
		live[s.ID] = true
		if s.State != eventsub.StateEnabled || !s.Matches(e, EventType) || !d.mayRead(ctx, s.Owner, e.System, scopes) {
			continue
		}
		d.offer(ctx, s, queued{e: e, eventType: EventType, published: published}, senders)
	}
	for id, sn := range senders {
		if !live[id] {
			sn.stop()
			delete(senders, id)
		}
	}
}

// offer queues q for s, starting its sender if it has none (or again
// after a client's PATCH resumed it); false when s's sender gave up or
// its queue is full (s is then suspended by its policy).
func (d *Delivery) offer(ctx context.Context, s *eventsub.Subscription, q queued, senders map[string]*sender) bool {
	sn := senders[s.ID]
	if sn != nil {
		select {
		case <-sn.ended:
			if sn.current().Generation >= s.Generation {
				return false // given up; the store records it
			}
			sn = nil // resumed by a client's PATCH: start again
		default:
			sn.follow(*s)
		}
	}
	if sn == nil {
		sn = d.startSender(ctx, *s)
		senders[s.ID] = sn
	}
	if !sn.enqueue(q) {
		sn.stop()
		delete(senders, s.ID)
		d.giveUp(ctx, s, errQueueFull)
		return false
	}
	return true
}

// mayRead reports whether owner's scope (looked up now, cached for one
// event in scopes) covers sys; an event of the service itself goes to
// administrators only, and one of a System whose labels are unknown only
// to owners that need none.
func (d *Delivery) mayRead(ctx context.Context, owner string, sys system.Key, scopes map[string]*auth.Scope) bool {
	sc, ok := scopes[owner]
	if !ok {
		if u, err := d.Users.Lookup(ctx, owner); err == nil {
			sc = &u.Scope
		}
		scopes[owner] = sc
	}
	if sc == nil {
		return false // the owner is gone
	}
	if sys == (system.Key{}) {
		return sc.Unrestricted()
	}
	vm, err := d.VMs.VM(sys)
	if err != nil {
		return sc.AllowsNamespace(sys.Namespace) && (sc.Selector == nil || sc.Selector.Empty())
	}
	return sc.Allows(sys, vm.GetLabels())
}

// giveUp applies s's DeliveryRetryPolicy: terminate deletes it, any other
// suspends it.
func (d *Delivery) giveUp(ctx context.Context, s *eventsub.Subscription, why error) {
	log := logctx.From(ctx)
	var err error
	if s.RetryPolicy == eventsub.RetryTerminate {
		log.WarnContext(ctx, "event subscription deleted: delivery failed after its retries", "subscription", s.ID, "owner", s.Owner, "error", why.Error())
		err = d.Store.Delete(context.WithoutCancel(ctx), s.ID)
		if errors.Is(err, eventsub.ErrNotFound) {
			err = nil
		}
	} else {
		log.WarnContext(ctx, "event subscription suspended", "subscription", s.ID, "owner", s.Owner, "error", why.Error())
		err = d.Store.SetState(context.WithoutCancel(ctx), s.ID, eventsub.StateDisabled)
	}
	if err != nil {
		log.ErrorContext(ctx, "apply event subscription's retry policy", "subscription", s.ID, "error", err.Error())
	}
}

func (d *Delivery) observe(sub string, e event.Event, err error, took time.Duration) {
	if d.Observe != nil {
		d.Observe(sub, e, err, took)
	}
}
