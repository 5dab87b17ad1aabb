package power

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Errors callers classify with errors.Is.
var (
	// ErrInvalid: a value outside what the bridge accepts.
	ErrInvalid = apply.ErrInvalid
	// ErrBusy: the system is in a transition the request cannot run
	// through now (its boot order kept changing under a power-on); the
	// client retries (Redfish 409).
	ErrBusy = errors.New("system in transition")
)

// RunStrategy values the bridge writes.
const (
	runOn  = kubevirt.RunStrategyRerunOnFailure
	runOff = kubevirt.RunStrategyHalted
)

// Writer is what power needs of apply: the concern writes, Relayout, and
// the state change requests (status) virt-controller starts and stops on.
type Writer interface {
	apply.Writer
	Relayout(ctx context.Context, key system.Key) (*apply.VM, error)
	StateChange(ctx context.Context, key system.Key, change apply.StateChangeFunc) (*apply.VM, error)
}

// Forcer stops or restarts a VM's guest at once: the stop and restart
// subresources of virt-api, which shorten the VMI's
// terminationGracePeriodSeconds (package virtapi). An error wrapping
// virtapi.ErrNotServed means the cluster has no virt-api to ask.
type Forcer interface {
	ForceStop(ctx context.Context, namespace, name string) error
	ForceRestart(ctx context.Context, namespace, name string) error
}

// Service runs power and boot verbs. Safe for concurrent use.
type Service struct {
	w     Writer
	dyn   dynamic.Interface
	force Forcer // nil: ForceOff and ForceRestart stay graceful
	now   func() time.Time
	// holdTimeout bounds a held power-on (hold.go).
	holdTimeout time.Duration
	// notServed logs once that the cluster cannot force.
	notServed sync.Once
}

// New returns a Service writing through w, reading VMIs through dyn and
// forcing power-offs and restarts through force (nil: it cannot force;
// ForceOff and ForceRestart then act as GracefulShutdown and
// GracefulRestart). It logs with the logger in each call's context.
func New(w Writer, dyn dynamic.Interface, force Forcer) *Service {
	return &Service{w: w, dyn: dyn, force: force, now: time.Now, holdTimeout: DefaultHoldTimeout}
}

// errUnsettled: the boot layout changed between Relayout and power-on.
var errUnsettled = errors.New("boot order not settled")

// maxStartAttempts bounds relayout-then-start rounds; between rounds the
// start backs off with apply.Backoff (startBackoff, doubling, jittered, at
// most maxStartBackoff): the usual cause of an unsettled read is the cache not
// yet showing the relayout just written, or a concurrent insert or boot
// change, and both pass in milliseconds.
const (
	maxStartAttempts = 12
	startBackoff     = 10 * time.Millisecond
	maxStartBackoff  = 500 * time.Millisecond
)

// start powers the VM on for a client's Reset (see the package doc).
// deferred reports that it recorded OnDeferred instead. A VM still stopping
// gracefully refuses it with a [*ResetConflictError] (conflict.go).
func (s *Service) start(ctx context.Context, key system.Key, kind system.ResetType) (deferred bool, err error) {
	return s.startIf(ctx, key, nil, func(vm *apply.VM) error {
		if !stopping(vm) {
			return nil
		}
		// Confirm on the live VMI: right after a ForceOff the cache may
		// still show the grace period virt-api has just cut.
		if stop, err := s.stoppingLive(ctx, vm); err != nil || !stop {
			return err
		}
		return &ResetConflictError{ResetType: kind, Reason: stillStopping}
	})
}

// startIf is start that writes nothing unless guard (nil: none) holds on
// each fresh read it decides on, and answers refuse's error (nil: none)
// when refuse refuses that read.
func (s *Service) startIf(ctx context.Context, key system.Key, guard func(*apply.VM) bool, refuse func(*apply.VM) error) (deferred bool, err error) {
	for attempt := range maxStartAttempts {
		if attempt > 0 {
			if err := apply.Backoff(ctx, attempt, startBackoff, maxStartBackoff); err != nil {
				return false, fmt.Errorf("power on %s: %w", key, err)
			}
		}
		if _, err := s.w.Relayout(ctx, key); err != nil {
			return false, fmt.Errorf("power on %s: settle boot order: %w", key, err)
		}
		running, wasOn, refused := false, false, false
		_, err := s.w.Power(ctx, key, func(vm *apply.VM, p *apply.PowerChange) error {
			deferred, running = false, false
			if refused = guard != nil && !guard(vm); refused {
				return apply.ErrNoChange
			}
			if refuse != nil {
				if err := refuse(vm); err != nil {
					return err
				}
			}
			wasOn = isOn(vm)
			if slot, busy := busySlot(vm); busy {
				// Decide from the VM's own runStrategy (covered by the
				// precondition), never from the VMI in the cache: a VMI
				// still shown after a power-off must not let a start
				// through while an import is in flight.
				// (A guest that shut itself down leaves a final VMI under
				// RerunOnFailure: that VM is off, so the start is deferred.)
				if meantToRun(vm) && (vm.VMI == nil || !kubevirt.Final(vm.VMI)) {
					running = true
					return apply.ErrNoChange
				}
				deferred = true
				p.Intent = s.holdFor(vm, vm.Power, s.now())
				logctx.From(ctx).Info("power-on held until media import completes", "vm", key, "slot", slot.Slot, "phase", slot.Phase,
					"until", p.Intent.Until)
				return nil
			}
			if !apply.Settled(vm) {
				return errUnsettled
			}
			p.Intent = system.PowerIntent{}
			p.RunStrategy = runOn
			return nil
		})
		if errors.Is(err, errUnsettled) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("power on %s: %w", key, err)
		}
		if deferred {
			return true, nil
		}
		if running || refused {
			return false, nil // already on while an import is in flight: touch nothing
		}
		if wasOn {
			// Confirm "already on" live: a guest that shut down a moment
			// ago may still show a Running VMI in the cache.
			if on, err := s.vmiLive(ctx, key); err != nil || on {
				return false, err
			}
		}
		// Under RerunOnFailure virt-controller starts a VMI only when the
		// run strategy just changed or on a Start request: a VM whose guest
		// shut down, whose VMI was deleted, or whose Halted was never
		// observed before this On keeps its runStrategy and stays off.
		// The Start request (what virt-api's start does) covers them all;
		// on a VM that is in fact running virt-controller just drops it.
		return false, s.requestIf(ctx, key, guard, kubevirt.StateChangeRequest{Action: kubevirt.StartRequest})
	}
	return false, fmt.Errorf("power on %s: boot order kept changing after %d attempts: %w: %w", key, maxStartAttempts, ErrBusy, errUnsettled)
}

// stop withdraws a pending Start request, sets runStrategy Halted and clears
// a held power-on (hold.go); virt-controller then deletes the VMI. The Start
// request goes first: virt-controller answers a Start on a Halted VM
// without a VMI by switching it to runStrategy Always.
//
// The bridge never deletes the VMI itself: that forces nothing (virt-handler
// stops the guest by the VMI's spec.terminationGracePeriodSeconds, whatever
// the delete asked) and races virt-controller, whose VMI informer can see
// the delete before its VM informer sees Halted; a stale view (strategy
// just changed, or a Start request) then starts a new VMI.
//
// force (ForceOff) then asks virt-api to stop the guest at once (see
// forceStop).
func (s *Service) stop(ctx context.Context, key system.Key, force bool) error {
	if err := s.endRebootWatch(ctx, key); err != nil {
		return fmt.Errorf("power off %s: %w", key, err)
	}
	_, err := s.w.StateChange(ctx, key, func(_ *apply.VM, reqs *[]kubevirt.StateChangeRequest) error {
		kept := slices.DeleteFunc(slices.Clone(*reqs), func(r kubevirt.StateChangeRequest) bool { return r.Action == kubevirt.StartRequest })
		if len(kept) == len(*reqs) {
			return apply.ErrNoChange
		}
		*reqs = kept
		return nil
	})
	if err != nil {
		return fmt.Errorf("power off %s: withdraw start request: %w", key, err)
	}
	wasHeld := false
	vm, err := s.w.Power(ctx, key, func(vm *apply.VM, p *apply.PowerChange) error {
		wasHeld = vm.Power.OnDeferred
		p.Intent = system.PowerIntent{}
		p.RunStrategy = runOff
		return nil
	})
	if err != nil {
		return fmt.Errorf("power off %s: %w", key, err)
	}
	if wasHeld {
		logctx.From(ctx).Info("held power-on cancelled by a power-off", "vm", key, "force", force)
	}
	if force {
		return s.forceStop(ctx, vm)
	}
	return nil
}

// restart replaces the running VMI with a new one the way virt-api's
// restart does: a Stop request for exactly that VMI followed by a Start
// (virt-controller deletes it, then creates a new one; deleting the VMI
// alone would leave a RerunOnFailure VM off). The boot order is settled
// first, so a pending override takes effect. A VM that is not on is
// powered on instead. force (ForceRestart) asks virt-api (see
// forceRestart).
func (s *Service) restart(ctx context.Context, key system.Key, kind system.ResetType) error {
	force := kind == system.ResetForceRestart
	if err := s.endRebootWatch(ctx, key); err != nil {
		return fmt.Errorf("restart %s: %w", key, err)
	}
	if _, err := s.w.Relayout(ctx, key); err != nil {
		return fmt.Errorf("restart %s: settle boot order: %w", key, err)
	}
	vm, err := s.w.Read(ctx, key)
	if err != nil {
		return fmt.Errorf("restart %s: %w", key, err)
	}
	if !isOn(vm) {
		_, err := s.start(ctx, key, kind)
		return err
	}
	add := restartRequests(vm)
	if force {
		if add, err = s.forceRestart(ctx, vm); err != nil || len(add) == 0 {
			return err
		}
	}
	if err := s.request(ctx, key, add...); err != nil {
		return fmt.Errorf("restart %s: %w", key, err)
	}
	return nil
}

// isOn: the VM is meant to run and its VMI is live.
func isOn(vm *apply.VM) bool { return meantToRun(vm) && live(vm) }

// meantToRun: the VM's runStrategy keeps it running (RerunOnFailure, the
// bridge's own, or Always, its author's).
func meantToRun(vm *apply.VM) bool {
	rs := runStrategyOf(vm)
	return rs == runOn || rs == kubevirt.RunStrategyAlways
}

// request appends state change requests unless the list already ends with
// them (a retried or repeated call adds nothing).
func (s *Service) request(ctx context.Context, key system.Key, add ...kubevirt.StateChangeRequest) error {
	return s.requestIf(ctx, key, nil, add...)
}

// requestIf is request that appends nothing unless guard (nil: none) holds
// on the fresh read.
func (s *Service) requestIf(ctx context.Context, key system.Key, guard func(*apply.VM) bool, add ...kubevirt.StateChangeRequest) error {
	_, err := s.w.StateChange(ctx, key, func(vm *apply.VM, reqs *[]kubevirt.StateChangeRequest) error {
		if guard != nil && !guard(vm) {
			return apply.ErrNoChange
		}
		if n := len(*reqs); n >= len(add) && slices.Equal((*reqs)[n-len(add):], add) {
			return apply.ErrNoChange
		}
		*reqs = append(slices.Clone(*reqs), add...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("request %v on %s: %w", add, key, err)
	}
	logctx.From(ctx).Info("state change requested", "vm", key, "requests", add)
	return nil
}

// vmiLive reports, from a live GET, whether the VM has a VMI that is
// neither final nor being deleted.
func (s *Service) vmiLive(ctx context.Context, key system.Key) (bool, error) {
	vmi, err := s.dyn.Resource(kubevirt.VirtualMachineInstances).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("power on %s: read VMI: %w", key, err)
	}
	return kubevirt.Live(vmi), nil
}

// runStrategyOf returns the VM's spec.runStrategy ("" when unset).
func runStrategyOf(vm *apply.VM) kubevirt.RunStrategyValue { return kubevirt.RunStrategyOf(vm.Object) }
