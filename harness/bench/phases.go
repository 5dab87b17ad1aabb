package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// probe runs the cycles one at a time; after every step it waits until the
// bridge sent no apiserver request for 500ms (at most 10s) and charges the
// requests since the previous step to the step.
func probe(ctx context.Context, c *Client, counter *KubeCounter, keys []system.Key, cycle CycleOptions, out map[string]KubeCounts) error {
	settle(ctx, counter)
	last := counter.Snapshot()
	cycle.Between = func(ctx context.Context, op string) {
		settle(ctx, counter)
		now := counter.Snapshot()
		d := now.Sub(last)
		if out[op] == nil {
			out[op] = KubeCounts{}
		}
		for k, v := range d {
			out[op][k] += v
		}
		last = now
	}
	for _, k := range keys {
		if err := Cycle(ctx, c, k.ID(), cycle); err != nil {
			return fmt.Errorf("probe: %w", err)
		}
	}
	return nil
}

func settle(ctx context.Context, counter *KubeCounter) {
	deadline := time.Now().Add(10 * time.Second)
	for counter.IdleFor() < 500*time.Millisecond && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
}

// GET System in the read-only phase after the load, with one client and
// with K clients.
const (
	OpGetSystemRO1 = "GET System (read-only, 1 client)"
	OpGetSystemRO  = "GET System (read-only, K clients)"
)

// readOnly runs GET System as op with workers clients over keys for d.
func readOnly(ctx context.Context, c *Client, op string, keys []system.Key, workers int, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ctx.Err() == nil; i += workers {
				err := c.Do(ctx, op, http.MethodGet, systemPath(keys[i%len(keys)].ID()), nil, nil)
				if err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
