// Package eventlog keeps each System's event log, what a BMC's system
// event log shows (Redfish `Systems/{id}/LogServices/Log`): the events of
// the replica's [event.Bus] (package eventsource publishes them on every
// replica), the newest [PerSystem] of each System kept, older ones
// dropped.
//
// The log lives in the replica's memory: every replica keeps the same
// entries from the moment it started (the same events with the same IDs),
// a replica that starts begins empty (nothing before its start is
// replayed), and [Log.Clear] (Redfish ClearLog) empties the log of the
// replica that answered; the others keep theirs until they restart or are
// cleared. A System removed keeps its log until its entries age out: its
// ResourceRemoved is the last entry.
package eventlog
