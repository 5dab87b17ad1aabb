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
// vm and returns the requests the bridge must still add itself (see
// restartRequests for the unforced restart):
//
//   - no request pending: virt-api's restart (grace period 1, then
//     Stop(uid)+Start in one status patch); nothing to add;
//   - a request pending (a Start a moment-old On left, a restart
//     virt-controller has not handled yet): virt-api's restart refuses to
//     add to a non-empty list (500, "stop/start already underway"), its
//     stop replaces the list with Stop(uid) at grace period 0; the Start
//     is the bridge's to add after it. If virt-controller acts on the Stop
//     first, the VM is off for the moment until the Start arrives, which
//     then starts it;
//   - without virt-api, or with the grace period already 0: the bridge's
//     own Stop(uid)+Start (graceful).
//
// virt-api's 409 on the stop (the list changed under its JSON patch test)
// is ErrBusy.
func (s *Service) forceRestart(ctx context.Context, vm *apply.VM) (add []kubevirt.StateChangeRequest, err error) {
	own := restartRequests(vm)
	if s.force == nil || !needsForce(vm) {
		return own, nil
	}
	pending := kubevirt.StateChangeRequestsOf(vm.Object)
	if len(pending) == 0 {
		err = s.force.ForceRestart(ctx, vm.Key.Namespace, vm.Key.Name) // virt-api adds both requests
	} else {
		err = s.force.ForceStop(ctx, vm.Key.Namespace, vm.Key.Name)
		add = []kubevirt.StateChangeRequest{{Action: kubevirt.StartRequest}}
	}
	switch {
	case err == nil:
		logctx.From(ctx).Info("forced restart requested from virt-api", "vm", vm.Key, "uid", vm.VMI.GetUID(), "pending", pending)
		return add, nil
	case errors.Is(err, virtapi.ErrNotServed):
		s.warnNotServed(ctx, err)
		return own, nil
	case len(pending) > 0 && apierrors.IsConflict(err):
		return nil, fmt.Errorf("force restart %s: state change requests %v changed meanwhile: %w: %w", vm.Key, pending, ErrBusy, err)
	}
	return nil, fmt.Errorf("force restart %s: %w", vm.Key, err)
}

// restartRequests is the bridge's own restart of vm's live VMI: Stop of
// exactly that VMI, then Start.
func restartRequests(vm *apply.VM) []kubevirt.StateChangeRequest {
	return []kubevirt.StateChangeRequest{{Action: kubevirt.StopRequest, UID: string(vm.VMI.GetUID())}, {Action: kubevirt.StartRequest}}
}

// warnNotServed logs, once per Service, that ForceOff and ForceRestart
// cannot force in this cluster.
func (s *Service) warnNotServed(ctx context.Context, err error) {
	s.notServed.Do(func() {
		logctx.From(ctx).Warn("cannot force power-offs and restarts: ForceOff and ForceRestart stay graceful "+
			"(the guest gets its VMI's terminationGracePeriodSeconds)", "error", err)
	})
}
