package power

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// ResetConflictError is a Reset the system cannot take in the transition
// it is in; the same request succeeds once that transition ends, so the
// client retries it (Redfish 409 ActionParameterValueConflict on
// ResetType, which Ironic 39 retries a power-on on). Two transitions
// refuse a Reset:
//
//   - a power-on (On, ForceOn, a restart or PushPowerButton of a VM that is
//     not on) while the VM is still stopping gracefully ([stopping]): a
//     power-off was written (runStrategy Halted) and its VMI, which has
//     not ended, still has its guest's grace period (a GracefulShutdown,
//     or a ForceOff where the cluster has no virt-api to force it). The
//     guest may take that whole grace period (an hour for some), and an
//     On queued behind it would read as powering on all that time: the
//     client retries, or forces the power-off first. After a ForceOff
//     (grace period cut to 0 by virt-api) the On is accepted and reads
//     PoweringOn until the VM runs (state.go), as Ironic 21.4's reboot
//     (ForceOff, then On as soon as it reads PoweringOff) needs;
//   - a power-on or ForceRestart whose write kept meeting a moving target
//     ([ErrBusy]: the boot order changed under it on every attempt, or the
//     state change requests changed under virt-api's call).
//
// It matches [ErrBusy].
type ResetConflictError struct {
	ResetType system.ResetType
	// Reason says what the system is doing, for the client's Resolution.
	Reason string
	// Err is the cause, when there is one.
	Err error
}

func (e *ResetConflictError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("reset %s refused: %s: %v", e.ResetType, e.Reason, e.Err)
	}
	return fmt.Sprintf("reset %s refused: %s", e.ResetType, e.Reason)
}

// Is makes a ResetConflictError an [ErrBusy].
func (e *ResetConflictError) Is(target error) bool { return target == ErrBusy }

// Unwrap returns the cause.
func (e *ResetConflictError) Unwrap() error { return e.Err }

// Reasons of a [ResetConflictError].
const (
	stillStopping = "the system is still powering off gracefully (its VirtualMachineInstance has not ended yet); ForceOff ends it at once"
	keptChanging  = "the system's boot order or power requests kept changing during the request"
)

// stopping reports whether vm is still stopping gracefully: its
// runStrategy is Halted (a power-off was written) and it still has a VMI
// that has not ended (being deleted, or not yet deleted by virt-controller)
// whose grace period was not cut to 0 or 1 (virt-api's forced stop and
// restart).
func stopping(vm *apply.VM) bool {
	if runStrategyOf(vm) != kubevirt.RunStrategyHalted || vm.VMI == nil || kubevirt.Final(vm.VMI) {
		return false
	}
	grace, set := kubevirt.VMIGracePeriodOf(vm.VMI)
	return !set || grace > 1
}

// stoppingLive is [stopping] for vm with its VMI read live (a GET), so a
// power-on right after a ForceOff is not refused on a cached VMI that
// still shows the grace period virt-api has cut.
func (s *Service) stoppingLive(ctx context.Context, vm *apply.VM) (bool, error) {
	if s.dyn == nil {
		return stopping(vm), nil
	}
	vmi, err := s.dyn.Resource(kubevirt.VirtualMachineInstances).Namespace(vm.Key.Namespace).Get(ctx, vm.Key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("power on %s: read VMI: %w", vm.Key, err)
	}
	live := *vm
	live.VMI = vmi
	return stopping(&live), nil
}
