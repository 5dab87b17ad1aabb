package eventdelivery

import (
	"context"
	"sync"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// TestEvents sends SubmitTestEvent's events from the replica that took
// the request (no leader needed: each is sent once, by that replica),
// one attempt to each of the caller's enabled subscriptions (an
// administrator's: every one) whatever their filters: a test event tests
// the destination.
type TestEvents struct {
	poster *poster
}

// NewTestEvents returns the test event sender of cfg's policy and
// timeout.
func NewTestEvents(cfg Config) *TestEvents {
	return &TestEvents{poster: newPoster(cfg.AddrPolicy, cfg.Timeout)}
}

// Submit posts e to the subscriptions of subs p may see and returns once
// every post ended (each bounded by the delivery timeout); a failed one
// is logged, not returned: the request that sent it succeeded.
func (t *TestEvents) Submit(ctx context.Context, p auth.Principal, subs []eventsub.Subscription, e event.Event, eventType string) {
	log := logctx.From(ctx)
	var wg sync.WaitGroup
	for i := range subs {
		s := &subs[i]
		if s.State != eventsub.StateEnabled || s.Owner != p.User && !p.Scope.Unrestricted() {
			continue
		}
		body, err := Body(e, eventType, s.Context)
		if err != nil {
			log.WarnContext(ctx, "test event", "error", err.Error())
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := t.poster.post(ctx, s, body); err != nil {
				log.WarnContext(ctx, "test event not delivered", "subscription", s.ID, "error", err.Error())
			}
		}()
	}
	wg.Wait()
}
