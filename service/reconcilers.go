package service

import (
	"context"
	"errors"
	"sync"

	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/media"
)

// reconcileWorkers work each reconciler's queue.
const reconcileWorkers = 2

// A reconciler is one controller engine, which lives across leadership
// terms (so do its metrics), and how a term of it starts: term returns
// the term's run, or why it cannot start.
type reconciler struct {
	ctrl *controller.Controller
	term func() (run func(ctx context.Context) error, err error)
}

// reconcilers run every reconciler for each leadership term: media gets a
// fresh reconciler per term (one runs once), power's runs every term.
// Adding a reconciler is one entry in service.go's list.
type reconcilers struct {
	list       []reconciler
	mediaCount *media.Counters // media's counters, over every term

	mu      sync.Mutex
	leading bool
}

// run runs one term of every reconciler until ctx ends; an error means
// one could not start (then none started) or stopped (then the others are
// stopped), while ctx had not ended.
func (r *reconcilers) run(ctx context.Context) error {
	runs := make([]func(context.Context) error, len(r.list))
	for i, rec := range r.list {
		var err error
		if runs[i], err = rec.term(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(runs))
	for i, run := range runs {
		wg.Go(func() {
			defer cancel()
			if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *reconcilers) setLeading(v bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leading = v
}

// Leading reports whether this replica runs the reconcilers now.
func (r *reconcilers) Leading() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leading
}

// mediaStats are the media counters of every term so far.
func (r *reconcilers) mediaStats() media.Stats { return r.mediaCount.Stats() }

// controllers are the engines' counters, cumulative over the terms.
func (r *reconcilers) controllers() []controller.Stats {
	out := make([]controller.Stats, len(r.list))
	for i, rec := range r.list {
		out[i] = rec.ctrl.Stats()
	}
	return out
}
