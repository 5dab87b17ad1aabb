package redfish

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// baseRegistryJSON is the DMTF Base message registry the service's messages
// come from; it is also served under /redfish/v1/Registries.
//
//go:embed registries/Base.1.9.3.json
var baseRegistryJSON []byte

// baseRegistryID prefixes every MessageId.
const baseRegistryID = "Base.1.9.3"

type registryMessage struct {
	Message      string
	Severity     string
	NumberOfArgs int
	Resolution   string
}

var baseRegistry = func() map[string]registryMessage {
	var r struct {
		ID       string `json:"Id"`
		Messages map[string]registryMessage
	}
	if err := json.Unmarshal(baseRegistryJSON, &r); err != nil {
		panic(fmt.Sprintf("embedded Base registry: %v", err))
	}
	if r.ID != baseRegistryID {
		panic(fmt.Sprintf("embedded Base registry is %s, want %s", r.ID, baseRegistryID))
	}
	return r.Messages
}()

// newerBase holds the few Base messages the service answers with that
// Base 1.9.3 (the registry it serves) lacks, each with the Base registry
// version that defines it: its MessageId carries that version.
// ActionParameterValueConflict is the 409 on which Ironic 39 retries a
// power-on (a Reset the system's transition refuses for now).
var newerBase = map[string]struct {
	registry string
	registryMessage
}{
	"ActionParameterValueConflict": {"Base.1.13.0", registryMessage{
		Message:      "The parameter '%1' with the requested value of '%2' does not meet the constraints of the implementation.",
		Severity:     "Warning",
		NumberOfArgs: 2,
		Resolution:   "No resolution is required.",
	}},
}

// lookupMessage returns the registry entry of Base message id and the
// registry id its MessageId starts with.
func lookupMessage(id string) (registryMessage, string, bool) {
	if m, ok := baseRegistry[id]; ok {
		return m, baseRegistryID, true
	}
	if m, ok := newerBase[id]; ok {
		return m.registryMessage, m.registry, true
	}
	return registryMessage{}, "", false
}

// Message is one entry of @Message.ExtendedInfo.
type Message struct {
	// ID is the Base registry key, e.g. "PropertyValueNotInList".
	ID   string
	Args []string
	// Related are JSON pointers into the request body, e.g.
	// "#/Boot/BootSourceOverrideTarget".
	Related []string
	// Resolution overrides the registry's resolution (used with GeneralError).
	Resolution string
}

// msg builds a Message; it panics on an id the registry lacks or a wrong
// argument count, which tests catch.
func msg(id string, related []string, args ...string) Message {
	m, _, ok := lookupMessage(id)
	if !ok {
		panic("redfish: no Base message " + id)
	}
	if len(args) != m.NumberOfArgs {
		panic(fmt.Sprintf("redfish: Base message %s wants %d args, got %d", id, m.NumberOfArgs, len(args)))
	}
	return Message{ID: id, Args: args, Related: related}
}

func (m Message) render() obj {
	r, registry, _ := lookupMessage(m.ID)
	text := r.Message
	for i := len(m.Args); i >= 1; i-- {
		text = strings.ReplaceAll(text, fmt.Sprintf("%%%d", i), m.Args[i-1])
	}
	out := obj{
		"@odata.type":     "#Message.v1_1_1.Message",
		"MessageId":       registry + "." + m.ID,
		"Message":         text,
		"Severity":        r.Severity,
		"MessageSeverity": r.Severity,
		"Resolution":      r.Resolution,
	}
	if m.Resolution != "" {
		out["Resolution"] = m.Resolution
	}
	if len(m.Args) > 0 {
		out["MessageArgs"] = m.Args
	}
	if len(m.Related) > 0 {
		out["RelatedProperties"] = m.Related
	}
	return out
}
