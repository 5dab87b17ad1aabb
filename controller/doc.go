// Package controller is the one engine every reconciler of the bridge runs
// on (power/ and media/): a rate-limited client-go workqueue of
// [system.Key]s worked by N workers, one leadership term at a time.
//
// A [Controller] lives as long as the process; [Controller.Run] runs one
// term. Run makes the term's queue, starts each [Source] in order (a
// source registers its event handlers and returns how to remove them),
// works the queue until ctx ends, then removes every handler its sources
// registered, shuts the queue down and waits for the workers' current
// items. The next term starts from a fresh queue and registers its
// handlers again: a term leaves no handler behind (an informer handler
// that outlived its term would keep feeding a dead queue and grow with
// every term).
//
// The workqueue gives the per-key guarantees: a key is never reconciled by
// two workers at once, a key added while it is being reconciled is
// reconciled once more afterwards, and adds of a waiting key collapse
// into one. A failed pass is requeued with the rate limiter's per-key
// backoff (client-go's default controller limiter: 5 ms doubling to
// 1000 s, and 10 qps overall); a pass that succeeds forgets the key's
// backoff; [Result.RequeueAfter] looks again after a delay.
//
// The Controller's counters ([Stats]: adds, passes by outcome, retries,
// work duration) are cumulative over the terms, so metrics/ exports them
// labelled controller="power" or "media" without any summing by the
// caller; the queue depth is the current term's.
//
// Why not controller-runtime's controller: its Controller is built for a
// manager and its cache (sources are cache-backed kinds, the lifecycle is
// the manager's, leader election included). The bridge's informers are its
// own (inventory/ trims objects on the way in, media/ watches labelled
// import objects per namespace) and its terms are run by service/'s
// leader election; what the bridge needs of controller-runtime's
// controller is its ~300 lines of processNextWorkItem/reconcileHandler
// over the same client-go workqueue, which this package is (with handler
// removal per term, which controller-runtime's sources do not offer).
package controller
