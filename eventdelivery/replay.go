package eventdelivery

import (
	"context"
	"time"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// A term of the delivery starts where the last one (on any replica)
// stopped: each subscription's [eventsub.Mark] says the last event
// delivered to it, and the new leader replays from its bus's history the
// events after it, then delivers the live ones. Events the old leader
// delivered after it last recorded its marks are delivered again: a
// receiver drops them by their Id.

// ReplaySlack widens a replay back by the events published this long
// before the mark: two replicas may publish events of different Systems
// in a slightly different order, and a mark's time (or a subscription's
// creation time) comes from another replica's clock.
const ReplaySlack = 2 * time.Second

// replay queues for each enabled subscription the records of held (this
// replica's history, oldest first) its last term may not have
// delivered, that it matches and its owner may read; at most half its
// queue, the newest.
func (d *Delivery) replay(ctx context.Context, held []event.Record, subs []eventsub.Subscription, senders map[string]*sender) {
	log := logctx.From(ctx)
	scopes := map[string]*auth.Scope{}
	for i := range subs {
		s := &subs[i]
		if s.State != eventsub.StateEnabled {
			continue
		}
		rs, lost := toReplay(held, s)
		if lost {
			log.WarnContext(ctx, "event subscription's last delivered event is older than this replica's history: events may have been lost",
				"subscription", s.ID, "delivered", s.Delivered)
		}
		var queue []event.Record
		for _, r := range rs {
			if s.Matches(r.Event, EventType) && d.mayRead(ctx, s.Owner, r.System, scopes) {
				queue = append(queue, r)
			}
		}
		if limit := max(d.cfg.QueueSize/2, 1); len(queue) > limit {
			log.WarnContext(ctx, "event replay longer than half the subscription's queue: only the newest replayed",
				"subscription", s.ID, "replay", len(queue), "replayed", limit)
			queue = queue[len(queue)-limit:]
		}
		for _, r := range queue {
			if !d.offer(ctx, s, queued{e: r.Event, eventType: EventType, published: r.Published}, senders) {
				break
			}
		}
		if len(queue) > 0 {
			log.InfoContext(ctx, "event replay queued", "subscription", s.ID, "events", len(queue))
		}
	}
}

// toReplay is what of held s's last term may not have delivered: the
// records after its mark's event (ReplaySlack before it included), or
// when held lacks that event, the records published since the mark's
// time (lost: held begins after it, events between may be gone); with
// no mark, the records since s was created.
func toReplay(held []event.Record, s *eventsub.Subscription) (rs []event.Record, lost bool) {
	if s.Delivered == nil {
		return withoutID(event.Since(held, s.Created.Add(-ReplaySlack)), ""), false
	}
	if i := event.Newest(held, s.Delivered.ID); i >= 0 {
		return withoutID(event.Since(held, held[i].Published.Add(-ReplaySlack)), s.Delivered.ID), false
	}
	from := s.Delivered.Published.Add(-ReplaySlack)
	lost = len(held) > 0 && held[0].Published.After(from)
	return event.Since(held, from), lost
}

// withoutID is rs without the records of event id, a fresh slice.
func withoutID(rs []event.Record, id string) []event.Record {
	out := make([]event.Record, 0, len(rs))
	for _, r := range rs {
		if id == "" || r.ID != id {
			out = append(out, r)
		}
	}
	return out
}
