package service

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/power"
)

// reconcilers creates fresh media and power reconcilers for every
// leadership term (a reconciler runs once) and keeps their counters
// cumulative across terms for the metrics.
type reconcilers struct {
	newMedia func() (*media.Reconciler, error)
	newPower func() (*power.Reconciler, error)
	workers  int

	mu      sync.Mutex
	past    media.Stats // counters of finished terms
	media   *media.Reconciler
	power   *power.Reconciler
	leading bool
}

// run runs one term's reconcilers until ctx ends; an error means they
// could not start (and ctx had not ended).
func (r *reconcilers) run(ctx context.Context) error {
	mediaRec, err := r.newMedia()
	if err != nil {
		return fmt.Errorf("media reconciler: %w", err)
	}
	powerRec, err := r.newPower()
	if err != nil {
		return fmt.Errorf("power reconciler: %w", err)
	}
	r.mu.Lock()
	r.media, r.power = mediaRec, powerRec
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.past = addStats(r.past, mediaRec.Stats())
		r.media, r.power = nil, nil
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mediaErr error
	wg.Go(func() {
		defer cancel()
		if err := mediaRec.Run(ctx); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			mediaErr = fmt.Errorf("media reconciler: %w", err)
		}
	})
	wg.Go(func() { powerRec.Run(ctx, r.workers) })
	wg.Wait()
	return mediaErr
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

// mediaStats sums the media counters of every term so far.
func (r *reconcilers) mediaStats() media.Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.past
	if r.media != nil {
		s = addStats(s, r.media.Stats())
	}
	return s
}

// queues are the current term's queue depths (none while not leading).
func (r *reconcilers) queues() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	if r.media != nil {
		out["media"] = r.media.QueueLen()
	}
	if r.power != nil {
		out["power"] = r.power.QueueLen()
	}
	return out
}

func addStats(a, b media.Stats) media.Stats {
	return media.Stats{
		PodsCreated: a.PodsCreated + b.PodsCreated, ClaimsCreated: a.ClaimsCreated + b.ClaimsCreated,
		ImportsReady: a.ImportsReady + b.ImportsReady, ImportsFailed: a.ImportsFailed + b.ImportsFailed,
		ImportsTimedOut: a.ImportsTimedOut + b.ImportsTimedOut, StalePodsDeleted: a.StalePodsDeleted + b.StalePodsDeleted,
		VolumesHealed: a.VolumesHealed + b.VolumesHealed, DisksWithoutVol: a.DisksWithoutVol + b.DisksWithoutVol,
		OrphanClaimsFreed: a.OrphanClaimsFreed + b.OrphanClaimsFreed,
	}
}
