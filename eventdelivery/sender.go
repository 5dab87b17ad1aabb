package eventdelivery

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// queued is one event waiting for a subscription, and when this replica
// published it (zero: not from the bus, e.g. a test event).
type queued struct {
	e         event.Event
	eventType string
	published time.Time
}

// sender drains one subscription's queue in order.
type sender struct {
	mu   sync.Mutex
	sub  eventsub.Subscription // guarded by mu: a client's PATCH replaces it
	q    chan queued
	stop context.CancelFunc
	done chan struct{}
	// ended is closed once the sender gave up (its policy applied).
	ended chan struct{}
	// mark is the last bus event delivered (guarded by mu; ID "": none
	// this term).
	mark eventsub.Mark
}

func (d *Delivery) startSender(ctx context.Context, s eventsub.Subscription) *sender {
	ctx, stop := context.WithCancel(ctx)
	sn := &sender{sub: s, q: make(chan queued, d.cfg.QueueSize), stop: stop, done: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(sn.done)
		d.run(ctx, sn)
	}()
	return sn
}

// current is the subscription as last seen.
func (sn *sender) current() eventsub.Subscription {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return sn.sub
}

// follow takes a newer generation of the subscription (a client's
// PATCH): the events still queued are sent as it now says.
func (sn *sender) follow(s eventsub.Subscription) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if s.Generation > sn.sub.Generation {
		sn.sub = s
	}
}

// delivered records q as the last event delivered.
func (sn *sender) delivered(q queued) {
	if q.published.IsZero() {
		return
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.mark = eventsub.Mark{ID: q.e.ID, Published: q.published.UTC().Round(0)}
}

// lastDelivered is the last bus event delivered this term (ok false:
// none).
func (sn *sender) lastDelivered() (m eventsub.Mark, ok bool) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return sn.mark, sn.mark.ID != ""
}

// enqueue queues e without blocking; false when the queue is full.
func (sn *sender) enqueue(q queued) bool {
	select {
	case sn.q <- q:
		return true
	default:
		return false
	}
}

// run posts the queued events one at a time, each retried until it is
// delivered or the subscription's policy gives up.
func (d *Delivery) run(ctx context.Context, sn *sender) {
	for {
		var q queued
		select {
		case <-ctx.Done():
			return
		case q = <-sn.q:
		}
		if err := d.deliver(ctx, sn, q); err != nil {
			if ctx.Err() == nil {
				close(sn.ended)
				sub := sn.current()
				d.giveUp(ctx, &sub, err)
			}
			return
		}
	}
}

// errQueueFull is why a subscription whose queue filled was suspended.
var errQueueFull = errors.New("the subscription's delivery queue is full: its destination does not keep up")

// deliver posts q until it is delivered, retried by the subscription's
// policy; the error is the last failure once the policy gives up.
func (d *Delivery) deliver(ctx context.Context, sn *sender, q queued) error {
	sub := sn.current()
	body, err := Body(q.e, q.eventType, sub.Context)
	if err != nil {
		return err
	}
	log := logctx.From(ctx)
	wait := d.cfg.RetryInterval
	for attempt := 0; ; attempt++ {
		start := time.Now()
		err := d.poster.post(ctx, &sub, body)
		if err == nil {
			sn.delivered(q) // before it is observed: an observer sees it recorded
		}
		d.observe(sub.ID, q.e, err, time.Since(start))
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		forever := sub.RetryPolicy == eventsub.RetryForever || sub.RetryPolicy == eventsub.RetryForeverWithBackoff
		if !forever && attempt >= d.cfg.RetryAttempts {
			return err
		}
		log.WarnContext(ctx, "event delivery failed, retrying", "subscription", sub.ID, "event", q.e.ID, "attempt", attempt+1, "error", err.Error())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if sub.RetryPolicy != eventsub.RetryForever {
			wait = min(2*wait, MaxBackoff)
		}
	}
}
