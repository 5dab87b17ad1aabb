package eventsub

import (
	"slices"
	"strings"
	"time"

	"github.com/redfish-bridge/redfish-bridge/event"
)

// The values of an EventDestination's enums the bridge accepts.
const (
	ProtocolRedfish = "Redfish"
	FormatEvent     = "Event"

	// RetryTerminate deletes the subscription once an event could not be
	// delivered after the service's retries.
	RetryTerminate = "TerminateAfterRetries"
	// RetrySuspend suspends it (Status.State Disabled): nothing more is
	// queued for it until a client deletes and creates it again.
	RetrySuspend = "SuspendRetries"
	// RetryForever retries every DeliveryRetryIntervalSeconds without end,
	// the queue still bounded (a full queue suspends).
	RetryForever = "RetryForever"
	// RetryForeverWithBackoff is RetryForever with the interval doubling
	// up to [MaxBackoff].
	RetryForeverWithBackoff = "RetryForeverWithBackoff"

	// StateEnabled and StateDisabled are a subscription's Status.State.
	StateEnabled  = "Enabled"
	StateDisabled = "Disabled"
)

// RetryPolicies are the DeliveryRetryPolicy values, the default first.
var RetryPolicies = []string{RetrySuspend, RetryTerminate, RetryForever, RetryForeverWithBackoff}

// EventTypes are the (deprecated but still sent: sushy and Ironic default
// to ["Alert"]) EventTypes a subscription may filter on. Every event the
// bridge emits from a change is an Alert; a SubmitTestEvent carries the
// type its caller names.
var EventTypes = []string{"Alert", "StatusChange", "ResourceUpdated", "ResourceAdded", "ResourceRemoved", "Other"}

// RegistryPrefixes are the message registries the bridge's events come
// from.
var RegistryPrefixes = []string{"ResourceEvent", "TaskEvent", "Base"}

// Subscription is one EventDestination.
type Subscription struct {
	ID string `json:"id"`
	// Owner is the user who created it: only it and an administrator see
	// it, and it receives only events of the systems its owner may read.
	Owner       string `json:"owner"`
	Destination string `json:"destination"`
	Context     string `json:"context,omitempty"`
	Protocol    string `json:"protocol"`
	Format      string `json:"format"`

	RegistryPrefixes []string `json:"registryPrefixes,omitempty"`
	ResourceTypes    []string `json:"resourceTypes,omitempty"`
	// OriginResources are @odata.ids; SubordinateResources makes each
	// match the resources under it too.
	OriginResources      []string `json:"originResources,omitempty"`
	SubordinateResources bool     `json:"subordinateResources,omitempty"`
	EventTypes           []string `json:"eventTypes,omitempty"`
	MessageIDs           []string `json:"messageIds,omitempty"`

	RetryPolicy string `json:"retryPolicy"`
	// VerifyCertificate checks an https destination's certificate against
	// the bridge's trust (true unless the client turned it off).
	VerifyCertificate bool `json:"verifyCertificate"`
	// Headers are sent with every delivery; never shown to a client.
	Headers map[string]string `json:"headers,omitempty"`
	// State is StateEnabled, or StateDisabled once suspended.
	State string `json:"state"`
	// Generation counts the client's changes ([Store.Patch]): a delivery
	// that gave up on an older generation starts again on a newer one.
	Generation int64     `json:"generation,omitempty"`
	Created    time.Time `json:"created"`
	// Delivered is the last event the delivery posted to it, as the
	// leader last recorded it ([Store.SetDelivered]): a new leader
	// replays the events after it. Never shown to a client.
	Delivered *Mark `json:"delivered,omitempty"`
}

// Matches reports whether the subscription's filters let e through (an
// empty filter lets everything through; the owner's scope is the
// delivery's to check). eventType is e's EventType.
func (s *Subscription) Matches(e event.Event, eventType string) bool {
	if len(s.EventTypes) > 0 && !slices.Contains(s.EventTypes, eventType) {
		return false
	}
	if len(s.RegistryPrefixes) > 0 && !slices.ContainsFunc(s.RegistryPrefixes, func(p string) bool {
		return strings.HasPrefix(e.MessageID, p+".")
	}) {
		return false
	}
	if len(s.MessageIDs) > 0 && !slices.ContainsFunc(s.MessageIDs, func(id string) bool {
		return MessageIDMatches(id, e.MessageID)
	}) {
		return false
	}
	if len(s.ResourceTypes) > 0 && !slices.Contains(s.ResourceTypes, e.ResourceType) {
		return false
	}
	if len(s.OriginResources) > 0 && !slices.ContainsFunc(s.OriginResources, func(o string) bool {
		return o == e.Origin || s.SubordinateResources && strings.HasPrefix(e.Origin, strings.TrimSuffix(o, "/")+"/")
	}) {
		return false
	}
	return true
}

// MessageIDMatches compares a filter's MessageId with an event's: a
// filter without a version ("ResourceEvent.ResourcePowerStateChanged")
// matches every version of the registry.
func MessageIDMatches(filter, id string) bool {
	if filter == id {
		return true
	}
	fReg, fMsg := registryAndMessage(filter)
	eReg, eMsg := registryAndMessage(id)
	return fReg == eReg && fMsg == eMsg
}

// registryAndMessage splits "ResourceEvent.1.3.0.X" or "ResourceEvent.X"
// into its registry and message names.
func registryAndMessage(id string) (string, string) {
	parts := strings.Split(id, ".")
	if len(parts) < 2 {
		return id, ""
	}
	return parts[0], parts[len(parts)-1]
}
