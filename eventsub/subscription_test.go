package eventsub

import (
	"testing"

	"github.com/redfish-bridge/redfish-bridge/event"
)

// TestMatches: each filter lets through only what it names; empty
// filters let everything through.
func TestMatches(t *testing.T) {
	power := event.Event{MessageID: "ResourceEvent.1.3.0.ResourcePowerStateChanged", ResourceType: "ComputerSystem",
		Origin: "/redfish/v1/Systems/team-a.vm1"}
	media := event.Event{MessageID: "ResourceEvent.1.3.0.ResourceChanged", ResourceType: "VirtualMedia",
		Origin: "/redfish/v1/Systems/team-a.vm1/VirtualMedia/cd0"}
	for _, c := range []struct {
		name       string
		s          Subscription
		power, med bool
	}{
		{"no filter", Subscription{}, true, true},
		{"registry", Subscription{RegistryPrefixes: []string{"TaskEvent"}}, false, false},
		{"message id without version", Subscription{MessageIDs: []string{"ResourceEvent.ResourcePowerStateChanged"}}, true, false},
		{"resource type", Subscription{ResourceTypes: []string{"VirtualMedia"}}, false, true},
		{"origin", Subscription{OriginResources: []string{"/redfish/v1/Systems/team-a.vm1"}}, true, false},
		{"origin and subordinates", Subscription{OriginResources: []string{"/redfish/v1/Systems/team-a.vm1"}, SubordinateResources: true}, true, true},
		{"origin prefix is not a parent", Subscription{OriginResources: []string{"/redfish/v1/Systems/team-a.vm"}, SubordinateResources: true}, false, false},
		{"event type", Subscription{EventTypes: []string{"StatusChange"}}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Matches(power, "Alert"); got != c.power {
				t.Errorf("power event: %v, want %v", got, c.power)
			}
			if got := c.s.Matches(media, "Alert"); got != c.med {
				t.Errorf("media event: %v, want %v", got, c.med)
			}
		})
	}
}
