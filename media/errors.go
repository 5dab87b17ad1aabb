package media

import (
	"errors"
	"fmt"
)

// BusyError reports an insert of a different image while an import is in
// flight in the slot (Redfish 409).
type BusyError struct {
	Slot      string
	Image     string // the image being imported
	Requested string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("slot %s is busy importing %q; eject it before inserting %q", e.Slot, e.Image, e.Requested)
}

// ErrInvalidSlot reports a slot id the bridge does not serve (Redfish 404).
var ErrInvalidSlot = errors.New("invalid virtual media slot")
