package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTargets checks the targets table of the 10,000- and 100,000-VM
// scenarios: which targets apply, and each one's REACHED / NOT reached
// against the floor's figures of the same run.
func TestTargets(t *testing.T) {
	rate := func(op string, clients int, bridge, floor int) RatioRow {
		return RatioRow{Op: op, Clients: clients, Bridge: Rate{N: bridge, Took: time.Second}, Floor: Rate{N: floor, Took: time.Second}}
	}
	phases := []RSSPhase{{Name: "startup", Took: 3 * time.Second, RSSPeak: 100 << 20}, {Name: "idle", RSSEnd: 90 << 20}}
	tests := []struct {
		name string
		res  RSSResult
		want []string // each target's status, in order
	}{
		{"10k, all reached", RSSResult{
			Scenario: RSSScenario{VMs: 10000, Cycles: 1000, PowerPoll: 10000}.withDefaults(),
			Phases:   phases, BareList: 2 * time.Second, CyclesDone: 1000, Polls: 7000,
			Rates: []RatioRow{rate(OpGetSystem, 1, 61, 100), rate(OpGetSystem, 50, 50, 100), rate(OpGetSystems, 50, 80, 100)},
		}, []string{"REACHED", "REACHED", "REACHED", "REACHED", "REACHED", "REACHED"}},
		{"10k, misses", RSSResult{
			Scenario: RSSScenario{VMs: 10000, Cycles: 1000, PowerPoll: 10000}.withDefaults(),
			Phases:   []RSSPhase{{Name: "startup", Took: 4 * time.Second, RSSPeak: 151 << 20}}, BareList: 2 * time.Second,
			CyclesDone: 1000, Polls: 7000, PollFailures: 1,
			Rates: []RatioRow{rate(OpGetSystem, 1, 59, 100), rate(OpGetSystem, 50, 49, 100), rate(OpGetSystems, 50, 79, 100)},
		}, []string{"NOT reached", "NOT reached", "NOT reached", "NOT reached", "NOT reached", "NOT reached"}},
		{"100k, status by the bench, no cycles", RSSResult{
			Scenario: RSSScenario{VMs: 100000, Namespaces: 1000, StatusByBench: true, Cycles: 1000}.withDefaults(),
			Phases:   phases, BareList: 2 * time.Second,
			Rates: []RatioRow{rate(OpGetSystem, 1, 61, 100), rate(OpGetSystem, 50, 50, 100), rate(OpGetSystems, 50, 1, 100)},
			Pages: []RatioRow{rate(OpGetPage, 1, 300, 900), rate(OpGetPage, 50, 500, 1000)},
		}, []string{"REACHED", "REACHED", "REACHED", "REACHED", "REACHED", notMeasured}},
		{"bare list not timed", RSSResult{
			Scenario: RSSScenario{VMs: 1000}.withDefaults(), Phases: phases,
		}, []string{notMeasured, notMeasured, notMeasured, "REACHED", "REACHED", notMeasured}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, row := range tt.res.Targets() {
				got = append(got, row.Status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s\n%+v", diff, tt.res.Targets())
			}
		})
	}
}

// TestScenarioNamespaces checks that Namespaces spreads the VMs and that
// a bench-written status leaves no VM running, written or cycled.
func TestScenarioNamespaces(t *testing.T) {
	sc := RSSScenario{VMs: 100000, Namespaces: 1000, StatusByBench: true, Cycles: 1000}.withDefaults()
	got := []int{sc.PerNamespace, sc.namespaces(), sc.Running, sc.Writes, sc.Cycles}
	if diff := cmp.Diff([]int{100, 1000, 0, 0, 0}, got); diff != "" {
		t.Errorf("per namespace, namespaces, running, writes, cycles (-want +got):\n%s", diff)
	}
}
