package backend

import (
	"context"
	"errors"
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// IPMI is the IPMI endpoint's backend (ipmi.Backend) on the same verbs
// as the Redfish service's: Get, Reset and SetBoot of this Backend, so
// an IPMI power-on is deferred while an image imports and a boot device
// is written by redfish-boot exactly as a Boot PATCH is.
type IPMI struct{ b *Backend }

// IPMI returns the IPMI endpoint's backend.
func (b *Backend) IPMI() IPMI { return IPMI{b: b} }

// State implements ipmi.Backend.
func (i IPMI) State(ctx context.Context, key system.Key) (ipmi.State, error) {
	v, err := i.b.Get(ctx, key)
	if err != nil {
		return ipmi.State{}, err
	}
	return ipmi.State{Labels: v.Labels, PowerState: v.PowerState, Boot: v.Boot, BootMode: v.BootMode}, nil
}

// Reset implements ipmi.Backend.
func (i IPMI) Reset(ctx context.Context, key system.Key, kind system.ResetType) error {
	return refusedNow(i.b.Reset(ctx, key, kind))
}

// SetBoot implements ipmi.Backend.
func (i IPMI) SetBoot(ctx context.Context, key system.Key, patch system.BootPatch) error {
	return refusedNow(i.b.SetBoot(ctx, key, patch))
}

// refusedNow marks the errors a Redfish client gets as a 4xx refusal of
// the value or the action (not a failure of the bridge) as ipmi.ErrRefused.
func refusedNow(err error) error {
	var refused *redfish.RefusedValueError
	var bad *redfish.BadValueError
	var conflict *redfish.ConflictError
	var action *redfish.ActionConflictError
	if errors.As(err, &refused) || errors.As(err, &bad) || errors.As(err, &conflict) || errors.As(err, &action) {
		return fmt.Errorf("%w: %w", ipmi.ErrRefused, err)
	}
	return err
}
