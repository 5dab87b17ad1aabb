package power

import (
	"context"
	"errors"
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Reset performs #ComputerSystem.Reset:
//
//   - On, ForceOn: power on, or hold the power-on (OnDeferred, hold.go)
//     while an import is in flight (the Reconciler starts the VM later);
//   - ForceOff, GracefulShutdown: withdraw a pending Start request and set
//     runStrategy Halted (virt-controller deletes the VMI, virt-handler
//     stops the guest within the VMI's terminationGracePeriodSeconds);
//     ForceOff then has virt-api cut that grace period to 0 (force.go);
//   - ForceRestart, GracefulRestart: settle the boot order, then request a
//     Stop of the running VMI followed by a Start, as virt-api's restart
//     does (virt-controller replaces the VMI); ForceRestart has virt-api's
//     restart do it with grace period 0 instead. On a VM that is not on:
//     power on;
//   - PushPowerButton: On when the system is Off or powering off,
//     GracefulShutdown otherwise;
//   - anything else (Nmi among them: KubeVirt cannot inject one): an
//     [*apply.RefusedError] on ResetType (it wraps ErrInvalid).
//
// Off and shutdown cancel a held power-on. A power-on (On, ForceOn, a
// restart or PushPowerButton of a VM that is not on) while the VM is still
// stopping gracefully is refused with a [*ResetConflictError] (conflict.go).
func (s *Service) Reset(ctx context.Context, key system.Key, kind system.ResetType) error {
	err := s.reset(ctx, key, kind)
	var conflict *ResetConflictError
	if errors.Is(err, ErrBusy) && !errors.As(err, &conflict) {
		return &ResetConflictError{ResetType: kind, Reason: keptChanging, Err: err}
	}
	return err
}

// reset is Reset, its conflicts not yet named.
func (s *Service) reset(ctx context.Context, key system.Key, kind system.ResetType) error {
	switch kind {
	case system.ResetOn, system.ResetForceOn:
		_, err := s.start(ctx, key, kind)
		return err
	case system.ResetForceOff, system.ResetGracefulShutdown:
		return s.stop(ctx, key, kind == system.ResetForceOff)
	case system.ResetForceRestart, system.ResetGracefulRestart:
		return s.restart(ctx, key, kind)
	case system.ResetPushPowerButton:
		vm, err := s.w.Read(ctx, key)
		if err != nil {
			return fmt.Errorf("push power button on %s: %w", key, err)
		}
		if st := State(vm); st == system.PowerOff || st == system.PowerPoweringOff {
			_, err := s.start(ctx, key, kind)
			return err
		}
		return s.stop(ctx, key, false)
	}
	return fmt.Errorf("reset %s: %w", key, &apply.RefusedError{Property: "ResetType", Value: string(kind),
		Reason: "The bridge does not implement this ResetType: use one of the ResetType@Redfish.AllowableValues."})
}
