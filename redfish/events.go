package redfish

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
)

// The EventService and its subscriptions (EventDestinations). A user
// sees, reads and deletes only the subscriptions it created; an
// Administrator all of them. What a subscription receives, and how, is
// package eventdelivery's; what makes a valid one, package eventsub's.

const (
	eventServiceURI  = "/redfish/v1/EventService"
	subscriptionsURI = eventServiceURI + "/Subscriptions"
	submitTestEvent  = "EventService.SubmitTestEvent"
)

// eventTypes are the types of the EventService's bodies.
var eventTypes = []string{"EventService.v1_12_0", "EventDestination.v1_15_0", "EventDestinationCollection"}

// events is the EventService's backend.
func (s *Server) events(echo.Context) (Events, error) { return s.b.Events, nil }

func (s *Server) getEventService(c echo.Context) error {
	ev, err := s.events(c)
	if err != nil {
		return err
	}
	set := ev.Settings()
	body := obj{
		"@odata.id":                         eventServiceURI,
		"@odata.type":                       "#EventService.v1_12_0.EventService",
		"Id":                                "EventService",
		"Name":                              "Event Service",
		"ServiceEnabled":                    true,
		"DeliveryRetryAttempts":             set.RetryAttempts,
		"DeliveryRetryIntervalSeconds":      int(set.RetryInterval / time.Second),
		"EventFormatTypes":                  []string{eventsub.FormatEvent},
		"EventTypesForSubscription":         eventsub.EventTypes,
		"RegistryPrefixes":                  eventsub.RegistryPrefixes,
		"ResourceTypes":                     []string{"ComputerSystem", "VirtualMedia", "Task"},
		"SubordinateResourcesSupported":     true,
		"IncludeOriginOfConditionSupported": false,
		"Subscriptions":                     link(subscriptionsURI),
		"Status":                            statusOK(),
		"Actions": obj{"#" + submitTestEvent: obj{
			"target": eventServiceURI + "/Actions/" + submitTestEvent,
		}},
	}
	if s.b.Streams != nil {
		body["ServerSentEventUri"] = sseURI
	}
	return send(c, http.StatusOK, body)
}

// visible reports whether the caller may see subscription sub.
func visible(c echo.Context, sub eventsub.Subscription) bool {
	p := principal(c)
	return sub.Owner == p.User || hasPrivilege(p, privConfigureManager)
}

func (s *Server) listSubscriptions(c echo.Context) error {
	ev, err := s.events(c)
	if err != nil {
		return err
	}
	subs, err := ev.Subscriptions(c.Request().Context())
	if err != nil {
		return fmt.Errorf("list event subscriptions: %w", err)
	}
	uris := []string{}
	for _, sub := range subs {
		if visible(c, sub) {
			uris = append(uris, subscriptionsURI+"/"+sub.ID)
		}
	}
	return send(c, http.StatusOK, collection(subscriptionsURI, "#EventDestinationCollection.EventDestinationCollection",
		"Event Subscriptions", uris))
}

// subscription resolves :sub to a subscription the caller may see; one it
// may not is missing (404), as a System out of scope is.
func (s *Server) subscription(c echo.Context) (Events, eventsub.Subscription, error) {
	ev, err := s.events(c)
	if err != nil {
		return nil, eventsub.Subscription{}, err
	}
	subs, err := ev.Subscriptions(c.Request().Context())
	if err != nil {
		return nil, eventsub.Subscription{}, fmt.Errorf("read event subscriptions: %w", err)
	}
	for _, sub := range subs {
		if sub.ID == c.Param("sub") && visible(c, sub) {
			return ev, sub, nil
		}
	}
	return nil, eventsub.Subscription{}, fmt.Errorf("event subscription %q: %w", c.Param("sub"), ErrNotFound)
}

func (s *Server) getSubscription(c echo.Context) error {
	_, sub, err := s.subscription(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, renderSubscription(sub))
}

func (s *Server) deleteSubscription(c echo.Context) error {
	ev, sub, err := s.subscription(c)
	if err != nil {
		return err
	}
	if err := ev.Unsubscribe(c.Request().Context(), sub.ID); err != nil {
		return fmt.Errorf("delete event subscription %s: %w", sub.ID, subscriptionError(err))
	}
	return c.NoContent(http.StatusNoContent)
}

// renderSubscription is sub's EventDestination; HttpHeaders are never
// shown (the schema: null or empty on a GET).
func renderSubscription(sub eventsub.Subscription) obj {
	origins := make([]obj, len(sub.OriginResources))
	for i, o := range sub.OriginResources {
		origins[i] = link(o)
	}
	health := "OK"
	if sub.State != eventsub.StateEnabled {
		health = "Warning"
	}
	return obj{
		"@odata.id":            subscriptionsURI + "/" + sub.ID,
		"@odata.type":          "#EventDestination.v1_15_0.EventDestination",
		"Id":                   sub.ID,
		"Name":                 "Event Subscription " + sub.ID,
		"Destination":          sub.Destination,
		"Context":              sub.Context,
		"Protocol":             sub.Protocol,
		"SubscriptionType":     "RedfishEvent",
		"EventFormatType":      sub.Format,
		"EventTypes":           nonNil(sub.EventTypes),
		"RegistryPrefixes":     nonNil(sub.RegistryPrefixes),
		"ResourceTypes":        nonNil(sub.ResourceTypes),
		"MessageIds":           nonNil(sub.MessageIDs),
		"OriginResources":      origins,
		"SubordinateResources": sub.SubordinateResources,
		"DeliveryRetryPolicy":  sub.RetryPolicy,
		"VerifyCertificate":    sub.VerifyCertificate,
		"HttpHeaders":          []obj{},
		"Status":               obj{"State": sub.State, "Health": health},
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) postSubscription(c echo.Context) error {
	ev, err := s.events(c)
	if err != nil {
		return err
	}
	body, err := requireBody(c)
	if err != nil {
		return err
	}
	req, err := readSubscription(body)
	if err != nil {
		return err
	}
	sub, err := ev.Subscribe(c.Request().Context(), principal(c).User, req)
	if err != nil {
		return fmt.Errorf("create event subscription: %w", subscriptionError(err))
	}
	uri := subscriptionsURI + "/" + sub.ID
	c.Response().Header().Set(echo.HeaderLocation, uri)
	return send(c, http.StatusCreated, renderSubscription(sub))
}

// readSubscription reads a POSTed EventDestination: every problem of
// form at once; what the values mean is eventsub.Validate's.
func readSubscription(body map[string]json.RawMessage) (eventsub.Request, error) {
	p := newProps(body)
	var r eventsub.Request
	var ok bool
	r.Destination, ok = p.str("Destination", nil)
	p.require("Destination", ok)
	r.Context, _ = p.str("Context", nil)
	r.Protocol, ok = p.str("Protocol", nil)
	p.require("Protocol", ok)
	r.Format, _ = p.str("EventFormatType", nil)
	r.RetryPolicy, _ = p.str("DeliveryRetryPolicy", nil)
	if v, ok := p.boolean("VerifyCertificate"); ok {
		r.VerifyCertificate = &v
	}
	r.SubordinateResources, _ = p.boolean("SubordinateResources")
	// RedfishEvent is the only type a POST creates (SSE streams are not stored).
	p.str("SubscriptionType", []string{"RedfishEvent"})
	r.EventTypes = p.strList("EventTypes")
	r.RegistryPrefixes = p.strList("RegistryPrefixes")
	r.ResourceTypes = p.strList("ResourceTypes")
	r.MessageIDs = p.strList("MessageIds")
	r.OriginResources = p.linkList("OriginResources")
	r.Headers = p.headers("HttpHeaders")
	p.done(nil)
	return r, p.err()
}

// strList reads an array of strings.
func (p *props) strList(name string) []string {
	v, ok := p.raw(name)
	if !ok {
		return nil
	}
	var out []string
	if err := json.Unmarshal(v, &out); err != nil {
		p.typeError(name, v)
		return nil
	}
	return out
}

// linkList reads an array of {"@odata.id": uri}.
func (p *props) linkList(name string) []string {
	v, ok := p.raw(name)
	if !ok {
		return nil
	}
	var links []struct {
		ID *string `json:"@odata.id"`
	}
	if err := json.Unmarshal(v, &links); err != nil {
		p.typeError(name, v)
		return nil
	}
	out := make([]string, 0, len(links))
	for _, l := range links {
		if l.ID == nil {
			p.typeError(name, v)
			return nil
		}
		out = append(out, *l.ID)
	}
	return out
}

// headers reads HttpHeaders: an array of objects of string values (a
// later name wins).
func (p *props) headers(name string) map[string]string {
	v, ok := p.raw(name)
	if !ok {
		return nil
	}
	var list []map[string]string
	if err := json.Unmarshal(v, &list); err != nil {
		p.typeError(name, v)
		return nil
	}
	out := map[string]string{}
	for _, h := range list {
		for k, val := range h {
			out[k] = val
		}
	}
	return out
}

// subscriptionError maps the subscriptions' errors to the service's.
func subscriptionError(err error) error {
	var bad *eventsub.InvalidError
	switch {
	case errors.As(err, &bad):
		m := msg("PropertyValueFormatError", []string{"#/" + bad.Property}, bad.Value, bad.Property)
		m.Resolution = bad.Reason + "."
		return &Error{Status: http.StatusBadRequest, Messages: []Message{m}, Cause: err}
	case errors.Is(err, eventsub.ErrLimit):
		m := msg("CreateLimitReachedForResource", nil)
		m.Resolution = "Delete subscriptions you hold before creating more: " + err.Error() + "."
		return &Error{Status: http.StatusBadRequest, Messages: []Message{m}, Cause: err}
	case errors.Is(err, eventsub.ErrNotFound):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

// submitTestEvent sends a test event to the caller's subscriptions (an
// Administrator's: every one), from this replica.
func (s *Server) submitTestEvent(c echo.Context) error {
	ev, err := s.events(c)
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	p := newParams(c, submitTestEvent, body)
	e := event.Event{MessageID: "Base.1.9.3.Success", Message: "Successfully Completed Request", Severity: event.SeverityOK,
		Time: time.Now().UTC()}
	eventType := "Alert"
	if v, ok := p.str("EventType", eventsub.EventTypes); ok {
		eventType = v
	}
	if v, ok := p.str("EventId", nil); ok {
		e.ID = v
	}
	if v, ok := p.str("MessageId", nil); ok {
		e.MessageID = v
	}
	if v, ok := p.str("Message", nil); ok {
		e.Message = v
	}
	e.MessageArgs = p.strList("MessageArgs")
	for _, name := range []string{"Severity", "MessageSeverity"} {
		if v, ok := p.str(name, []string{"OK", "Warning", "Critical"}); ok {
			e.Severity = event.Severity(v)
		}
	}
	if v, ok := p.str("EventTimestamp", nil); ok {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			e.Time = t
		}
	}
	if v, ok := p.str("OriginOfCondition", nil); ok {
		e.Origin = v
	}
	if e.ID == "" {
		e.ID = "test-" + strconv.FormatInt(e.Time.UnixNano(), 36)
	}
	p.done(nil)
	if err := p.err(); err != nil {
		return err
	}
	if err := ev.SubmitTestEvent(c.Request().Context(), principal(c), e, eventType); err != nil {
		return fmt.Errorf("submit test event: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}
