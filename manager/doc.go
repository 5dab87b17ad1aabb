// Package manager runs the bridge's long-running parts: the HTTP servers,
// the informer caches, the parts every replica runs and the reconcilers
// only the leader runs. It is the composition root's engine, shaped after
// controller-runtime's pkg/manager (runnable_group.go); "manager" here is
// the process's, not a Redfish Manager nor an SSA field manager.
//
// A part is added to one [Group]; the group decides when it starts and
// stops, so the order of a start is the manager's, not the caller's:
//
//	Probes   /metrics, /healthz, /readyz: started first and ready (the
//	         server listens) before any cache starts, so a probe is
//	         answered (and /readyz says why not) while the caches sync
//	Caches   started together (the users and sessions load while the
//	         inventory lists every VM); [Manager.Start] returns once every
//	         one synced
//	Servers  started by [Manager.Serve], only after every cache synced;
//	         [Manager.Ready] is nil once every server is ready
//	Always   started after the servers, on every replica
//	Leader   started for each leadership term ([Options.Elect]) and
//	         stopped when the term ends; a term starts every Leader part
//	         or none, and the next term starts only after every part of
//	         the last one returned
//
// A part that fails (returns an error while its context lives) stops the
// bridge: every group is stopped and [Manager.Wait] returns that error.
// Stopping goes in the reverse order: Leader (the term ends, so the Lease
// is released before anything else stops), Always, Servers (in-flight
// requests finish while the caches still answer), Caches, Probes (the
// health endpoints answer until the last).
//
// A new long-running part is one [Manager.Add] in its own package (see
// docs/extending.md, "A long-running part").
package manager
