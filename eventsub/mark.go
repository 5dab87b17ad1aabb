package eventsub

import (
	"context"
	"time"
)

// Mark is how far the delivery got with a subscription: the last event
// posted to it, and when the replica that posted it had published that
// event (its clock).
type Mark struct {
	ID        string    `json:"id"`
	Published time.Time `json:"published"`
}

// SetDelivered records each subscription's Mark in marks (by
// subscription ID) in one resourceVersion-guarded update of the Secret,
// writing nothing when every mark is already there; a subscription
// deleted meanwhile is skipped.
func (st *Store) SetDelivered(ctx context.Context, marks map[string]Mark) error {
	return st.update(ctx, func(subs []Subscription) (map[string]*Subscription, error) {
		set := map[string]*Subscription{}
		for _, s := range subs {
			m, ok := marks[s.ID]
			if !ok || s.Delivered != nil && s.Delivered.ID == m.ID {
				continue
			}
			s.Delivered = &m
			set[s.ID] = &s
		}
		return set, nil
	})
}
