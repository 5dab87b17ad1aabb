package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// OpGetPage is GET of one $top/$skip page of the Systems collection;
// OpPowerPoll is GET System by the power-state poller of the cycle and
// poll phases; OpSubscribe and OpUnsubscribe are the events phase's POST
// and DELETE of a subscription.
const (
	OpGetPage     = "GET Systems page"
	OpPowerPoll   = "GET System (power poll)"
	OpSubscribe   = "POST EventService subscription"
	OpUnsubscribe = "DELETE EventService subscription"
)

// PageSize is the $top of the pages phase.
const PageSize = 1000

// PowerPollInterval is how often Ironic's conductor reads each node's
// power state ([conductor]sync_power_state_interval, 60 s by default).
// powerPollWorkers is how many reads it has in flight
// ([conductor]sync_power_state_workers, 8).
const (
	PowerPollInterval = 60 * time.Second
	powerPollWorkers  = 8
)

// pages measures GET of every $top=PageSize page of the collection, round
// robin, at 1 and sc.RateClients clients against the floor server.
func (m *meter) pages(ctx context.Context, sc RSSScenario, n int) error {
	var paths []string
	for skip := 0; skip < n; skip += PageSize {
		paths = append(paths, fmt.Sprintf("/redfish/v1/Systems?$top=%d&$skip=%d", PageSize, skip))
	}
	var err error
	m.res.Pages, err = Ratios(ctx, m.client.Base, m.client.User, m.client.Password, []ReadOp{{Name: OpGetPage, Paths: paths}},
		RatioOptions{Clients: []int{1, sc.RateClients}, Each: sc.Pages})
	return err
}

// powerPoll reads every key's System once per PowerPollInterval, spread
// evenly (Ironic's power-state sync), with powerPollWorkers reads in
// flight, until ctx ends or stop is called; stop returns the polls sent
// and how many failed.
func powerPoll(ctx context.Context, c *Client, keys []system.Key) (stop func() (polls, failed int)) {
	ctx, cancel := context.WithCancel(ctx)
	work := make(chan system.Key)
	var wg sync.WaitGroup
	var n, bad atomic.Int64
	for range powerPollWorkers {
		wg.Go(func() {
			for k := range work {
				err := c.Do(ctx, OpPowerPoll, http.MethodGet, systemPath(k.ID()), nil, nil)
				if ctx.Err() != nil {
					continue // cut short by stop, not a failure
				}
				n.Add(1)
				if err != nil {
					bad.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		defer close(work)
		tick := time.NewTicker(max(PowerPollInterval/time.Duration(max(len(keys), 1)), time.Millisecond))
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case work <- keys[i%len(keys)]:
			case <-ctx.Done():
				return
			}
		}
	})
	return func() (int, int) {
		cancel()
		wg.Wait()
		return int(n.Load()), int(bad.Load())
	}
}
