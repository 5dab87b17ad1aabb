package backend

import (
	"errors"
	"fmt"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
)

// TestTranslateBusy: a power-on refused because the system is in a
// transition is a Redfish conflict (409, which Ironic retries), not an
// unclassified error (500).
func TestTranslateBusy(t *testing.T) {
	err := translate(fmt.Errorf("power on ns/vm: boot order kept changing: %w", power.ErrBusy))
	if !errors.Is(err, redfish.ErrConflict) {
		t.Errorf("translate(ErrBusy) = %v, want it to wrap redfish.ErrConflict", err)
	}
	if !errors.Is(err, power.ErrBusy) {
		t.Errorf("translate(ErrBusy) = %v lost the cause", err)
	}
}
