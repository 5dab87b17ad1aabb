package service

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/power"
)

// reconcileWorkers work each reconciler's queue.
const reconcileWorkers = 2

// reconcilers run the media and power reconcilers for every leadership
// term on their controller engines, which live across terms (so do their
// metrics and media's counters): media gets a fresh reconciler per term
// (one runs once), power's runs every term.
type reconcilers struct {
	newMedia   func() (*media.Reconciler, error) // on mediaCtrl, counting into mediaCounters
	mediaCtrl  *controller.Controller
	mediaCount *media.Counters
	power      *power.Reconciler

	mu      sync.Mutex
	leading bool
}

// run runs one term's reconcilers until ctx ends; an error means they
// could not start (and ctx had not ended).
func (r *reconcilers) run(ctx context.Context) error {
	mediaRec, err := r.newMedia()
	if err != nil {
		return fmt.Errorf("media reconciler: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mediaErr, powerErr error
	wg.Go(func() {
		defer cancel()
		if err := mediaRec.Run(ctx); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			mediaErr = err
		}
	})
	wg.Go(func() {
		defer cancel()
		if err := r.power.Run(ctx); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			powerErr = err
		}
	})
	wg.Wait()
	return errors.Join(mediaErr, powerErr)
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
	return []controller.Stats{r.mediaCtrl.Stats(), r.power.Controller().Stats()}
}
