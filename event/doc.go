// Package event holds what the bridge tells about changes it saw: the
// [Event] (one Redfish EventRecord's worth: a registry MessageId, its
// arguments, the resource it is about) and the [Bus] every replica
// publishes its events on and its consumers read them from.
//
// Who does what around it:
//   - the sources (what is an event: power state changes, media, boot
//     override, health, Tasks, Systems created or deleted) watch the
//     caches every replica already has and [Bus.Publish] on every replica,
//     so each replica sees the same events with the same [Event.ID];
//   - readers that serve clients of their own replica (a Server-Sent
//     Events stream, a System's LogService) [Bus.Subscribe] on every
//     replica;
//   - subscription delivery (one replica delivers each event) subscribes
//     where it runs.
//
// The bus never blocks a publisher: a subscriber whose buffer is full is
// closed with [ErrOverflow] rather than slowing the sources or the other
// subscribers; a subscriber that must not lose events keeps its own
// durable record and catches up from it.
package event
