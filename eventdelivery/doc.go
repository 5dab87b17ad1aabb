// Package eventdelivery posts the bridge's events to the EventService's
// subscriptions: a part of the manager's Leader group (one replica
// delivers each event; see docs/events.md for what a leader change
// costs), added by [Add].
//
// Each subscription has a queue of its own, bounded ([Config.QueueSize])
// and drained by one sender in the order events were published, so the
// events of one System reach a receiver in order and a receiver that
// hangs or answers slowly holds up only its own subscription. A delivery
// that fails is retried by the subscription's DeliveryRetryPolicy with
// backoff; a subscription whose retries are exhausted (or whose queue
// fills) is suspended (Status.State Disabled) or deleted, as DMTF says.
//
// A term starts where the last one stopped, on any replica: the leader
// records in each subscription the last event delivered to it
// ([eventsub.Mark], every [Config.MarkInterval] and at its term's end),
// and a new term replays from its bus's history the events after that
// one before delivering the live ones (replay.go). A leader change costs
// duplicates, never a loss while the history holds the mark.
//
// A subscription receives only events of Systems its owner may read now
// (the owner's scope, looked up at each event), and every connection is
// checked against the destination address policy at dial time; no
// redirect is followed.
package eventdelivery
