package eventsub

import (
	"context"
	"fmt"
	"slices"
)

// Patch changes the writable properties of a subscription (DMTF's
// EventDestination: Context, DeliveryRetryPolicy, HttpHeaders,
// VerifyCertificate and Status.State); nil leaves one as it is. The
// filters, Destination and Protocol are read-only once created.
type Patch struct {
	Context, RetryPolicy, State *string
	VerifyCertificate           *bool
	// Headers, when HeadersSet, replace the subscription's (empty: none).
	Headers    map[string]string
	HeadersSet bool
}

// apply checks p and applies it to s, or returns an [*InvalidError].
// A State set to Enabled resumes a suspended subscription.
func (p Patch) apply(s *Subscription) error {
	if p.Context != nil {
		if len(*p.Context) > MaxContextLen || !printable(*p.Context) {
			return invalid("Context", *p.Context, "at most %d printable characters", MaxContextLen)
		}
		s.Context = *p.Context
	}
	if p.RetryPolicy != nil {
		if !slices.Contains(RetryPolicies, *p.RetryPolicy) {
			return invalid("DeliveryRetryPolicy", *p.RetryPolicy, "one of %v", RetryPolicies)
		}
		s.RetryPolicy = *p.RetryPolicy
	}
	if p.State != nil {
		if *p.State != StateEnabled && *p.State != StateDisabled {
			return invalid("Status/State", *p.State, "%s (resume) or %s (suspend)", StateEnabled, StateDisabled)
		}
		s.State = *p.State
	}
	if p.VerifyCertificate != nil {
		s.VerifyCertificate = *p.VerifyCertificate
	}
	if p.HeadersSet {
		h, err := checkHeaders(p.Headers)
		if err != nil {
			return err
		}
		s.Headers = h
	}
	s.Generation++
	return nil
}

// Patch applies p to subscription id in the same resourceVersion-guarded
// update as every other write, and returns it: an [*InvalidError] or an
// error wrapping [ErrNotFound] changes nothing.
func (st *Store) Patch(ctx context.Context, id string, p Patch) (Subscription, error) {
	var out Subscription
	err := st.update(ctx, func(subs []Subscription) (map[string]*Subscription, error) {
		for _, s := range subs {
			if s.ID == id {
				if err := p.apply(&s); err != nil {
					return nil, err
				}
				out = s
				return map[string]*Subscription{id: &s}, nil
			}
		}
		return nil, fmt.Errorf("event subscription %q: %w", id, ErrNotFound)
	})
	return out, err
}
