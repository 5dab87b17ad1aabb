// Package eventstream serves the EventService's Server-Sent Events
// (ServerSentEventUri, DSP0266 "Server-sent events"): every replica
// streams, from its own [event.Bus] (every replica has every event), the
// events a stream's $filter lets through and its user may read.
//
// What it owns:
//   - the $filter forms DSP0266 defines for a stream ([ParseFilter]):
//     EventFormatType, MessageId, OriginResource, RegistryPrefix,
//     ResourceType (and the deprecated EventType, and
//     SubordinateResources), joined by `or`, `and` and parentheses; a
//     hostile filter (too long, too deep, unknown) is refused, never
//     evaluated;
//   - the streams of this replica ([Streams]): a cap per user, a bounded
//     buffer per stream (a reader that falls behind is dropped, the bus
//     never waits for it), keep-alives, and the end of every stream of a
//     session that logged out.
//
// The HTTP framing (text/event-stream, `id:` and `data:` lines) is the
// Redfish service's (package redfish); a stream hands it [Frame]s.
package eventstream
