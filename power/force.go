package power

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/virtapi"
)

// Forcing. virt-handler lets a stopping guest shut down for its VMI's
// spec.terminationGracePeriodSeconds (KubeVirt's default 30 s, often 180 s
// or more) whoever deletes the VMI and however, so a guest that ignores
// ACPI keeps running that long after runStrategy Halted. Only virt-api may
// shorten that grace period (its VMI webhook refuses VMI spec changes
// from anyone else): its stop and restart subresources do, then add the
// state change requests virt-controller deletes the VMI on.

// needsForce: the VM has a VMI that is not final and whose grace period is
// not 0 already (a VMI that virt-controller is already deleting still
// needs it: virt-handler reads the grace period until the guest is gone).
func needsForce(vm *apply.VM) bool {
	if vm.VMI == nil || kubevirt.Final(vm.VMI) {
		return false
	}
	grace, set := kubevirt.VMIGracePeriodOf(vm.VMI)
	return !set || grace != 0
}

// forceStop, after runStrategy Halted was applied (vm is that write's
// result), asks virt-api to stop the VMI with grace period 0. virt-api's
// 409 is no error: under Halted it answers so when the VMI is gone or
// final, or its grace period is already no longer than 0 (it patches the
// grace period before it checks). Without virt-api the power-off stays
// graceful.
func (s *Service) forceStop(ctx context.Context, vm *apply.VM) error {
	if s.force == nil || !needsForce(vm) {
		return nil
	}
	err := s.force.ForceStop(ctx, vm.Key.Namespace, vm.Key.Name)
	switch {
	case err == nil:
		logctx.From(ctx).Info("forced stop requested from virt-api", "vm", vm.Key, "uid", vm.VMI.GetUID())
		return nil
	case apierrors.IsConflict(err):
		logctx.From(ctx).Debug("virt-api refused the forced stop (nothing left to force)", "vm", vm.Key, "error", err)
		return nil
	case errors.Is(err, virtapi.ErrNotServed):
		s.warnNotServed(ctx, err)
		return nil
	}
	return fmt.Errorf("force off %s: %w", vm.Key, err)
}

// forceRestart asks virt-api for a forced restart of the live VMI read in
// vm (grace period 1, then Stop(uid)+Start in one status patch); forced
// reports that it did, so the caller adds no request of its own. It
// replaces the bridge's own Stop(uid)+Start rather than following it:
// virt-api refuses (500, "stop/start already underway") to add two
// requests to a non-empty list, so a VM with a request still pending is
// ErrBusy (409: retry once virt-controller handled it), not a restart
// request virt-api would answer with an internal error. Without virt-api,
// or with the grace period already 0, the restart stays the bridge's own.
func (s *Service) forceRestart(ctx context.Context, vm *apply.VM) (forced bool, err error) {
	if s.force == nil || !needsForce(vm) {
		return false, nil
	}
	if reqs := kubevirt.StateChangeRequestsOf(vm.Object); len(reqs) > 0 {
		return false, fmt.Errorf("force restart %s: state change requests %v still pending: %w", vm.Key, reqs, ErrBusy)
	}
	err = s.force.ForceRestart(ctx, vm.Key.Namespace, vm.Key.Name)
	switch {
	case err == nil:
		logctx.From(ctx).Info("forced restart requested from virt-api", "vm", vm.Key, "uid", vm.VMI.GetUID())
		return true, nil
	case errors.Is(err, virtapi.ErrNotServed):
		s.warnNotServed(ctx, err)
		return false, nil
	}
	return false, fmt.Errorf("force restart %s: %w", vm.Key, err)
}

// warnNotServed logs, once per Service, that ForceOff and ForceRestart
// cannot force in this cluster.
func (s *Service) warnNotServed(ctx context.Context, err error) {
	s.notServed.Do(func() {
		logctx.From(ctx).Warn("cannot force power-offs and restarts: ForceOff and ForceRestart stay graceful "+
			"(the guest gets its VMI's terminationGracePeriodSeconds)", "error", err)
	})
}
