package event

import (
	"time"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Severity is an event's Redfish Health value: "OK", "Warning" or
// "Critical".
type Severity string

// The severities of the Redfish Health enum.
const (
	SeverityOK       Severity = "OK"
	SeverityWarning  Severity = "Warning"
	SeverityCritical Severity = "Critical"
)

// Event is one change, in the terms of a Redfish EventRecord.
type Event struct {
	// ID names the change, the same on every replica that saw it (built
	// from the object's UID and resourceVersion and the MessageID, never
	// from a replica's own counter), so a receiver can drop a duplicate.
	ID string
	// System is the System the event is about; zero for an event of the
	// service itself (SubmitTestEvent).
	System system.Key
	// MessageID is registry-qualified:
	// "ResourceEvent.1.3.0.ResourcePowerStateChanged".
	MessageID string
	// Message is the registry's message with MessageArgs substituted.
	Message     string
	MessageArgs []string
	Severity    Severity
	// Origin is the @odata.id of the resource the event is about (the
	// EventRecord's OriginOfCondition).
	Origin string
	// ResourceType is the Redfish type of Origin ("ComputerSystem",
	// "VirtualMedia", "Task"), what a subscription's ResourceTypes filter
	// matches.
	ResourceType string
	// Time is when the change happened (the object's own timestamp where
	// it has one, else when the replica saw it).
	Time time.Time
}
