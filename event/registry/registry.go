// Package registry holds the DMTF message registries the bridge's events
// come from, ResourceEvent 1.3.0 and TaskEvent 1.0.3: each message the
// bridge uses, with its published MessageId, text, severity and arguments
// (DMTF's Redfish-Publications, registries/ResourceEvent.1.3.0.json and
// registries/TaskEvent.1.0.3.json, copied message by message), a way to
// fill one in ([Message.Format]), and the registry document
// /redfish/v1/Registries serves ([JSON]). Only the messages the bridge
// emits are listed: a registry document that promises more would name
// events that never come.
package registry

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Registry is one message registry: its prefix, version and messages.
type Registry struct {
	Prefix      string
	Version     string
	Name        string
	Description string
	Messages    []*Message
}

// Message is one registry message.
type Message struct {
	Registry *Registry `json:"-"`
	Key      string    `json:"-"` // "ResourcePoweredOn"
	// Severity is the registry's MessageSeverity: "OK", "Warning" or
	// "Critical".
	Severity    string
	Description string
	Message     string // with %1, %2 ... for the arguments
	ParamTypes  []string
	Resolution  string
}

// ID is the registry-qualified MessageId:
// "ResourceEvent.1.3.0.ResourcePoweredOn".
func (m *Message) ID() string { return m.Registry.Prefix + "." + m.Registry.Version + "." + m.Key }

// Format is the message text with args substituted for %1, %2 ...; it
// panics when the number of args is not the registry's (a bug of the
// caller, not of input).
func (m *Message) Format(args ...string) string {
	if len(args) != len(m.ParamTypes) {
		panic(fmt.Sprintf("registry: %s takes %d args, got %d", m.ID(), len(m.ParamTypes), len(args)))
	}
	var out strings.Builder
	msg := m.Message
	for i := 0; i < len(msg); i++ { // one pass: an argument is never expanded again
		if msg[i] == '%' && i+1 < len(msg) && msg[i+1] >= '1' && msg[i+1] <= '9' {
			if n := int(msg[i+1] - '1'); n < len(args) {
				out.WriteString(args[n])
				i++
				continue
			}
		}
		out.WriteByte(msg[i])
	}
	return out.String()
}

// ID is the registry's Id, e.g. "ResourceEvent.1.3.0".
func (r *Registry) ID() string { return r.Prefix + "." + r.Version }

// JSON is the MessageRegistry document of r.
func (r *Registry) JSON() ([]byte, error) {
	msgs := make(map[string]any, len(r.Messages))
	for _, m := range r.Messages {
		e := map[string]any{
			"Description":     m.Description,
			"Message":         m.Message,
			"Severity":        m.Severity,
			"MessageSeverity": m.Severity,
			"NumberOfArgs":    len(m.ParamTypes),
			"Resolution":      m.Resolution,
		}
		if len(m.ParamTypes) > 0 {
			e["ParamTypes"] = m.ParamTypes
		}
		msgs[m.Key] = e
	}
	b, err := json.Marshal(map[string]any{
		"@odata.type":     "#MessageRegistry.v1_6_0.MessageRegistry",
		"Id":              r.ID(),
		"Name":            r.Name,
		"Language":        "en",
		"Description":     r.Description,
		"RegistryPrefix":  r.Prefix,
		"RegistryVersion": r.Version,
		"OwningEntity":    "DMTF",
		"Messages":        msgs,
	})
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", r.ID(), err)
	}
	return b, nil
}

func (r *Registry) add(m *Message) *Message {
	m.Registry = r
	r.Messages = append(r.Messages, m)
	return m
}
