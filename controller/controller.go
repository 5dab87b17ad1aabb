package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Result is what a pass asks of the engine besides its error.
type Result struct {
	// RequeueAfter, if positive, reconciles the key again after this long
	// (its failure backoff is forgotten as after any successful pass).
	RequeueAfter time.Duration
}

// Reconciler does one pass over one key. An error requeues the key with
// backoff (unless the term is ending).
type Reconciler interface {
	Reconcile(ctx context.Context, key system.Key) (Result, error)
}

// ReconcileFunc adapts a function to [Reconciler].
type ReconcileFunc func(ctx context.Context, key system.Key) (Result, error)

// Reconcile calls f.
func (f ReconcileFunc) Reconcile(ctx context.Context, key system.Key) (Result, error) {
	return f(ctx, key)
}

// Source feeds keys to one term: Start registers its event handlers (or
// starts its informers) to call enqueue, and returns stop, which removes
// them; Run calls stop when the term ends (or a later source fails to
// start).
type Source interface {
	Start(ctx context.Context, enqueue func(system.Key)) (stop func() error, err error)
}

// SourceFunc adapts a function to [Source].
type SourceFunc func(ctx context.Context, enqueue func(system.Key)) (func() error, error)

// Start calls f.
func (f SourceFunc) Start(ctx context.Context, enqueue func(system.Key)) (func() error, error) {
	return f(ctx, enqueue)
}

// Handlers is an event feed whose handlers can be removed;
// inventory.Inventory is one (VM and VMI changes by VM key).
type Handlers interface {
	AddVMHandler(handle func(system.Key)) (remove func() error, err error)
}

// VMEvents is the source of h's VM events (the VMs already known replayed
// first).
func VMEvents(h Handlers) Source {
	return SourceFunc(func(_ context.Context, enqueue func(system.Key)) (func() error, error) {
		return h.AddVMHandler(enqueue)
	})
}

// Options configure a [Controller].
type Options struct {
	// Workers reconcile in parallel (distinct keys only); default 1.
	Workers int
	// RateLimiter makes each term's queue's limiter; default client-go's
	// DefaultTypedControllerRateLimiter.
	RateLimiter func() workqueue.TypedRateLimiter[system.Key]
}

// Controller runs a Reconciler one term at a time. See the package doc.
type Controller struct {
	name string
	opts Options
	c    counters

	mu sync.Mutex
	q  workqueue.TypedRateLimitingInterface[system.Key] // the running term's, or nil
}

// New returns a Controller named name (the queue's name and the metrics'
// controller label).
func New(name string, opts Options) *Controller {
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.DefaultTypedControllerRateLimiter[system.Key]
	}
	c := &Controller{name: name, opts: opts}
	c.c.buckets = make([]uint64, len(DurationBuckets))
	return c
}

// Name is the controller's name.
func (c *Controller) Name() string { return c.name }

// Run runs one term: it starts sources in order, works the queue with the
// Workers until ctx ends, removes the sources' handlers and waits for the
// workers. Reconcile gets Run's ctx (and its logger). A Controller runs
// one term at a time; an error means a source did not start.
func (c *Controller) Run(ctx context.Context, r Reconciler, sources ...Source) error {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(c.opts.RateLimiter(),
		workqueue.TypedRateLimitingQueueConfig[system.Key]{Name: c.name})
	c.mu.Lock()
	if c.q != nil {
		c.mu.Unlock()
		q.ShutDown()
		return fmt.Errorf("controller %s: already running", c.name)
	}
	c.q = q
	c.mu.Unlock()
	var live atomic.Bool // the term's handlers enqueue only while it runs
	live.Store(true)
	enqueue := func(k system.Key) {
		if live.Load() {
			c.c.adds.Add(1)
			q.Add(k)
		}
	}
	var stops []func() error
	defer func() {
		live.Store(false)
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop())
		}
		if err := errors.Join(errs...); err != nil {
			logctx.From(ctx).WarnContext(ctx, "remove event handlers", "err", err)
		}
		q.ShutDown()
		c.mu.Lock()
		c.q = nil
		c.mu.Unlock()
	}()
	for _, s := range sources {
		stop, err := s.Start(ctx, enqueue)
		if err != nil {
			return fmt.Errorf("controller %s: start source: %w", c.name, err)
		}
		stops = append(stops, stop)
	}
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() {
			for c.next(ctx, q, r) {
			}
		})
	}
	<-ctx.Done()
	live.Store(false)
	q.ShutDown()
	wg.Wait()
	return nil
}

// Add enqueues key in the running term (none: dropped; the next term's
// sources replay what is known).
func (c *Controller) Add(key system.Key) {
	if q := c.queue(); q != nil {
		c.c.adds.Add(1)
		q.Add(key)
	}
}

// AddAfter enqueues key in the running term after d.
func (c *Controller) AddAfter(key system.Key, d time.Duration) {
	if q := c.queue(); q != nil {
		c.c.adds.Add(1)
		q.AddAfter(key, d)
	}
}

// Len is the running term's queue depth (0 between terms).
func (c *Controller) Len() int {
	if q := c.queue(); q != nil {
		return q.Len()
	}
	return 0
}

// Running reports whether a term runs.
func (c *Controller) Running() bool { return c.queue() != nil }

func (c *Controller) queue() workqueue.TypedRateLimitingInterface[system.Key] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.q
}

// next reconciles one key (controller-runtime's processNextWorkItem and
// reconcileHandler).
func (c *Controller) next(ctx context.Context, q workqueue.TypedRateLimitingInterface[system.Key], r Reconciler) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	start := time.Now()
	res, err := r.Reconcile(ctx, key)
	c.c.observe(time.Since(start))
	switch {
	case err != nil && ctx.Err() == nil:
		c.c.errors.Add(1)
		c.c.retries.Add(1)
		logctx.From(ctx).WarnContext(ctx, "reconcile failed, requeued", "vm", key.String(), "err", err)
		q.AddRateLimited(key)
	case err != nil: // the term is ending: the next term's replay looks again
		c.c.errors.Add(1)
		q.Forget(key)
	case res.RequeueAfter > 0:
		c.c.requeues.Add(1)
		q.Forget(key)
		q.AddAfter(key, res.RequeueAfter)
	default:
		c.c.successes.Add(1)
		q.Forget(key)
	}
	return true
}
