package eventstream

import (
	"errors"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/event"
)

var (
	powerOn = event.Event{ID: "p", MessageID: "ResourceEvent.1.3.0.ResourcePoweredOn", ResourceType: "ComputerSystem",
		Origin: "/redfish/v1/Systems/team-a.vm-1"}
	mediaChanged = event.Event{ID: "m", MessageID: "ResourceEvent.1.3.0.ResourceChanged", ResourceType: "VirtualMedia",
		Origin: "/redfish/v1/Systems/team-a.vm-1/VirtualMedia/cd0"}
	taskStarted = event.Event{ID: "t", MessageID: "TaskEvent.1.0.3.TaskStarted", ResourceType: "Task",
		Origin: "/redfish/v1/TaskService/Tasks/7"}
)

// TestFilterForms: every $filter form DSP0266 defines for a stream, with
// or, and and parentheses, lets through exactly the events it names.
func TestFilterForms(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   string // the IDs of powerOn, mediaChanged, taskStarted that pass
	}{
		{"", "pmt"},
		{"EventFormatType eq Event", "pmt"},
		{"EventFormatType eq 'MetricReport'", ""},
		{"MessageId eq 'ResourceEvent.1.3.0.ResourcePoweredOn'", "p"},
		{"MessageId eq 'ResourceEvent.ResourcePoweredOn'", "p"}, // every version
		{"OriginResource eq '/redfish/v1/Systems/team-a.vm-1'", "p"},
		{"(OriginResource eq '/redfish/v1/Systems/team-a.vm-1') and (SubordinateResources eq true)", "pm"},
		{"RegistryPrefix eq 'TaskEvent'", "t"},
		{"RegistryPrefix eq Resource", ""}, // a whole registry name, not a string prefix
		{"ResourceType eq 'VirtualMedia'", "m"},
		{"EventType eq Alert", "pmt"},
		{"(MessageId eq 'ResourceEvent.1.3.0.ResourcePoweredOn') or (ResourceType eq 'Task')", "pt"},
		{"ResourceType eq 'Task' or ResourceType eq 'VirtualMedia'", "mt"},
		{"RegistryPrefix eq 'ResourceEvent' and ResourceType eq 'ComputerSystem' or ResourceType eq 'Task'", "pt"},
		{"((ResourceType eq 'Task'))", "t"},
		{"OriginResource eq '/redfish/v1/it''s'", ""}, // a quoted quote
	} {
		t.Run(tc.filter, func(t *testing.T) {
			f, err := ParseFilter(tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, e := range []event.Event{powerOn, mediaChanged, taskStarted} {
				if f.Matches(e, "Alert") {
					got += e.ID
				}
			}
			if got != tc.want {
				t.Errorf("passed %q, want %q", got, tc.want)
			}
		})
	}
}

// TestHostileFilters: a filter too long, too deep, too wide, malformed or
// naming what a stream does not filter on is refused with its reason,
// never evaluated.
func TestHostileFilters(t *testing.T) {
	terms := strings.Repeat("ResourceType eq 'Task' or ", MaxFilterTerms) + "ResourceType eq 'Task'"
	for _, tc := range []struct{ filter, reason string }{
		{strings.Repeat("(", MaxFilterDepth+1) + "ResourceType eq 'Task'" + strings.Repeat(")", MaxFilterDepth+1), "nested deeper"},
		{strings.Repeat("(", 100000), "longer than"},
		{"ResourceType eq '" + strings.Repeat("x", MaxFilterLen) + "'", "longer than"},
		{terms, "more than"},
		{"ResourceType eq 'Task' or", "missing"},
		{"ResourceType eq 'Task')", "unexpected"},
		{"(ResourceType eq 'Task'", "')' is missing"},
		{"ResourceType ne 'Task'", "only comparison is eq"},
		{"ResourceType gt 'Task'", "only comparison is eq"},
		{"Destination eq 'http://169.254.169.254/'", "not a property"},
		{"Oem eq 'x'", "not a property"},
		{"ResourceType eq 'Task", "unterminated"},
		{"ResourceType eq ''", "1 to"},
		{"ResourceType eq 'Task\x00'", "printable"},
		{"EventFormatType eq 'Json'", "not one of"},
		{"SubordinateResources eq maybe", "not one of"},
		{"EventType eq 'Bogus'", "not one of"},
		{"ResourceType eq", "want `Property eq"},
		{"not ResourceType eq 'Task'", "not a property"},
		{"ResourceType eq 'Task' xor ResourceType eq 'Task'", "unexpected"},
	} {
		t.Run(tc.filter[:min(len(tc.filter), 40)], func(t *testing.T) {
			_, err := ParseFilter(tc.filter)
			var fe *FilterError
			if !errors.As(err, &fe) || !strings.Contains(fe.Reason, tc.reason) {
				t.Fatalf("ParseFilter = %v, want a FilterError saying %q", err, tc.reason)
			}
			if len(fe.Filter) > 83 {
				t.Errorf("the error repeats %d characters of the filter, want at most 80", len(fe.Filter))
			}
		})
	}
}
