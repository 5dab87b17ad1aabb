package backend

import (
	"context"
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// Events implements redfish.Events on the subscriptions' Secret.
type Events struct {
	store *eventsub.Store
	tests *eventdelivery.TestEvents
	cfg   eventdelivery.Config
}

// NewEvents returns the EventService's backend: subscriptions kept by
// store, validated and test events sent with cfg.
func NewEvents(store *eventsub.Store, cfg eventdelivery.Config) *Events {
	return &Events{store: store, tests: eventdelivery.NewTestEvents(cfg), cfg: cfg}
}

// Subscribe implements redfish.Events.
func (e *Events) Subscribe(ctx context.Context, owner string, r eventsub.Request) (eventsub.Subscription, error) {
	s, err := eventsub.Validate(r, e.cfg.AddrPolicy)
	if err != nil {
		return eventsub.Subscription{}, err
	}
	s.Owner = owner
	return e.store.Create(ctx, s)
}

// Subscriptions implements redfish.Events.
func (e *Events) Subscriptions(ctx context.Context) ([]eventsub.Subscription, error) {
	return e.store.List(ctx)
}

// Unsubscribe implements redfish.Events.
func (e *Events) Unsubscribe(ctx context.Context, id string) error {
	return e.store.Delete(ctx, id)
}

// Patch implements redfish.EventPatches.
func (e *Events) Patch(ctx context.Context, id string, p eventsub.Patch) (eventsub.Subscription, error) {
	return e.store.Patch(ctx, id, p)
}

// SubmitTestEvent implements redfish.Events.
func (e *Events) SubmitTestEvent(ctx context.Context, p auth.Principal, ev event.Event, eventType string) error {
	subs, err := e.store.List(ctx)
	if err != nil {
		return fmt.Errorf("test event: %w", err)
	}
	e.tests.Submit(ctx, p, subs, ev, eventType)
	return nil
}

// Settings implements redfish.Events.
func (e *Events) Settings() redfish.EventSettings {
	return redfish.EventSettings{RetryAttempts: e.cfg.RetryAttempts, RetryInterval: e.cfg.RetryInterval}
}
