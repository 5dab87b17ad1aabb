package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/eventsub"
)

// patchSubscription changes a subscription's writable properties
// (Context, DeliveryRetryPolicy, HttpHeaders, VerifyCertificate,
// Status.State: Enabled resumes a suspended one), for its owner or an
// Administrator (another user's is 404). Every other property it shows
// (Destination, the filters, ...) is PropertyNotWritable; nothing is
// changed unless everything is acceptable.
func (s *Server) patchSubscription(c echo.Context) error {
	_, sub, err := s.subscription(c)
	if err != nil {
		return err
	}
	if s.b.EventPatches == nil {
		return newError(http.StatusMethodNotAllowed, msg("ActionNotSupported", nil, http.MethodPatch))
	}
	body, err := requireBody(c)
	if err != nil {
		return err
	}
	p := newProps(body)
	var patch eventsub.Patch
	if v, ok := p.str("Context", nil); ok {
		patch.Context = &v
	}
	if v, ok := p.str("DeliveryRetryPolicy", eventsub.RetryPolicies); ok {
		patch.RetryPolicy = &v
	}
	if v, ok := p.boolean("VerifyCertificate"); ok {
		patch.VerifyCertificate = &v
	}
	if _, ok := p.raw("HttpHeaders"); ok {
		patch.Headers, patch.HeadersSet = p.headers("HttpHeaders"), true
		if patch.Headers == nil {
			patch.Headers = map[string]string{}
		}
	}
	shown := renderSubscription(sub)
	if st, ok := p.object("Status"); ok {
		if v, ok := st.str("State", []string{eventsub.StateEnabled, eventsub.StateDisabled}); ok {
			patch.State = &v
		}
		st.done(shown["Status"].(obj))
	}
	p.done(shown)
	if err := p.err(); err != nil {
		return err
	}
	out, err := s.b.EventPatches.Patch(c.Request().Context(), sub.ID, patch)
	if err != nil {
		return fmt.Errorf("patch event subscription %s: %w", sub.ID, subscriptionError(err))
	}
	return send(c, http.StatusOK, renderSubscription(out))
}
