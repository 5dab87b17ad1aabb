package inventory

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/apply"
)

// TestBridgeManagersAreApplys: the cache keeps the managedFields of
// exactly apply's field managers (the product's inventory does not import
// apply, so it spells them): a manager added to apply.Managers and not here would lose
// its ownership in the cache, and the Writer's decisions with it.
func TestBridgeManagersAreApplys(t *testing.T) {
	var got []string
	for m, kept := range bridgeManagers {
		if kept {
			got = append(got, m)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(apply.Managers))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inventory's bridge managers (-apply.Managers +inventory):\n%s", diff)
	}
}
