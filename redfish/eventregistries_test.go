package redfish

import (
	"slices"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/event/registry"
)

// TestEventRegistries: a client that reads an event's MessageId
// ("ResourceEvent.1.3.0.ResourcePoweredOn") finds its registry as sushy
// and the Protocol Validator do: the Registries collection lists the
// file, its Location serves the MessageRegistry, whose message has the
// published text, severity and number of arguments.
func TestEventRegistries(t *testing.T) {
	e := newEnv(t)
	var members []string
	for _, m := range e.get(t, "bob", "/redfish/v1/Registries")["Members"].([]any) {
		members = append(members, m.(map[string]any)["@odata.id"].(string))
	}
	for _, tc := range []struct {
		id, key, text, severity string
		args                    float64
	}{
		{"ResourceEvent.1.3.0", "ResourcePoweredOn", "The resource `%1` has powered on.", "OK", 1},
		{"ResourceEvent.1.3.0", "ResourceStatusChangedCritical", "The health of resource `%1` has changed to %2.", "Critical", 2},
		{"TaskEvent.1.0.3", "TaskAborted", "The task with Id '%1' has completed with errors.", "Critical", 1},
	} {
		if !slices.Contains(members, "/redfish/v1/Registries/"+tc.id) {
			t.Fatalf("Registries %v do not list %s", members, tc.id)
		}
		file := e.get(t, "bob", "/redfish/v1/Registries/"+tc.id)
		uri := file["Location"].([]any)[0].(map[string]any)["Uri"].(string)
		reg := e.get(t, "bob", uri)
		if reg["Id"] != tc.id || reg["RegistryPrefix"] != registryPrefix(tc.id) {
			t.Errorf("%s: registry Id %v prefix %v", uri, reg["Id"], reg["RegistryPrefix"])
		}
		m, _ := reg["Messages"].(map[string]any)[tc.key].(map[string]any)
		if m == nil || m["Message"] != tc.text || m["MessageSeverity"] != tc.severity || m["NumberOfArgs"] != tc.args {
			t.Errorf("%s %s: %v", tc.id, tc.key, m)
		}
	}
	// Every message an event can carry is in the registry served.
	for _, r := range []*registry.Registry{registry.ResourceEvent, registry.TaskEvent} {
		msgs := e.get(t, "bob", "/redfish/v1/Registries/"+r.ID()+"/"+r.ID()+".json")["Messages"].(map[string]any)
		for _, m := range r.Messages {
			if msgs[m.Key] == nil {
				t.Errorf("%s not served", m.ID())
			}
		}
	}
}

func registryPrefix(id string) string {
	for i := range id {
		if id[i] == '.' {
			return id[:i]
		}
	}
	return id
}
