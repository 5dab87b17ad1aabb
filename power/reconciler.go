package power

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Events is the VM/VMI change feed (inventory.Inventory implements it).
type Events interface {
	AddVMHandler(func(key system.Key)) error
}

// Reconciler finishes what a request started, driven by VM and VMI
// changes: (a) reverts a Once override after exactly one boot, (b) starts
// the VM again after a guest reboot ended the VMI that booted it
// (reboot.go), (c) runs or drops a deferred power-on, (d) re-lays out boot
// orders when disks changed under a pending override.
type Reconciler struct {
	s *Service
	q workqueue.TypedRateLimitingInterface[system.Key]
}

// NewReconciler subscribes to events; call Run to work.
func NewReconciler(s *Service, events Events) (*Reconciler, error) {
	r := &Reconciler{
		s: s,
		q: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[system.Key](),
			workqueue.TypedRateLimitingQueueConfig[system.Key]{Name: "power"}),
	}
	if err := events.AddVMHandler(r.q.Add); err != nil {
		return nil, fmt.Errorf("power reconciler: %w", err)
	}
	return r, nil
}

// QueueLen is the number of VMs waiting to be reconciled.
func (r *Reconciler) QueueLen() int { return r.q.Len() }

// Run works the queue with workers goroutines until ctx ends. It logs with
// the logger in ctx, named controller=power.
func (r *Reconciler) Run(ctx context.Context, workers int) {
	ctx = logctx.Into(ctx, logctx.From(ctx).With("controller", "power"))
	go func() {
		<-ctx.Done()
		r.q.ShutDown()
	}()
	done := make(chan struct{})
	for range max(workers, 1) {
		go func() {
			defer func() { done <- struct{}{} }()
			for r.next(ctx) {
			}
		}()
	}
	for range max(workers, 1) {
		<-done
	}
}

func (r *Reconciler) next(ctx context.Context) bool {
	key, quit := r.q.Get()
	if quit {
		return false
	}
	defer r.q.Done(key)
	if err := r.Reconcile(ctx, key); err != nil {
		logctx.From(ctx).Warn("power reconcile failed, requeued", "vm", key, "err", err)
		r.q.AddRateLimited(key)
		return true
	}
	r.q.Forget(key)
	return true
}

// Reconcile does one pass over one VM.
func (r *Reconciler) Reconcile(ctx context.Context, key system.Key) error {
	vm, err := r.s.w.Read(ctx, key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if onceDone(vm) {
		if err := r.revertOnce(ctx, key); err != nil {
			return err
		}
		if vm, err = r.s.w.Read(ctx, key); err != nil {
			return err
		}
	}
	if rebootWatched(vm) {
		if err := r.followReboot(ctx, key, vm); err != nil {
			return err
		}
	}
	if vm.Power.OnDeferred {
		if err := r.deferred(ctx, key, vm); err != nil {
			return err
		}
	}
	if apply.Active(vm.Boot) && !apply.Settled(vm) {
		if _, err := r.s.w.Relayout(ctx, key); err != nil {
			return fmt.Errorf("relayout %s: %w", key, err)
		}
	}
	return nil
}

// onceDone: a Once override whose boot happened: a VMI other than the one
// armed is Running, or already Succeeded (its guest rebooted or powered off
// before the revert: it ran).
func onceDone(vm *apply.VM) bool {
	if vm.Boot.Enabled != system.BootOnce || vm.VMI == nil || string(vm.VMI.GetUID()) == vm.Boot.ArmedVMI {
		return false
	}
	return (kubevirt.PhaseOf(vm.VMI) == kubevirt.PhaseRunning && vm.VMI.GetDeletionTimestamp() == nil) || kubevirt.PhaseOf(vm.VMI) == kubevirt.PhaseSucceeded
}

// revertOnce disables the override (re-checked on the fresh read the
// Writer passes), which releases the boot orders and rebootPolicy, and
// watches the VMI that booted it when a guest reboot ends it (reboot.go).
func (r *Reconciler) revertOnce(ctx context.Context, key system.Key) error {
	_, err := r.s.w.Boot(ctx, key, func(vm *apply.VM, o *system.BootOverride) error {
		if !onceDone(vm) {
			return apply.ErrNoChange
		}
		logctx.From(ctx).Info("boot override Once used: reverting", "vm", key, "target", o.Target, "vmi", vm.VMI.GetUID())
		*o = system.BootOverride{Target: system.BootNone, Enabled: system.BootDisabled, Mode: o.Mode, SecureBoot: o.SecureBoot,
			HTTPBootURI: o.HTTPBootURI, RebootVMI: rebootVMI(vm)}
		return nil
	})
	if err != nil {
		return fmt.Errorf("revert Once override of %s: %w", key, err)
	}
	return nil
}

// deferred starts the VM once no import is in flight, or drops the request
// when an import failed.
func (r *Reconciler) deferred(ctx context.Context, key system.Key, vm *apply.VM) error {
	if _, busy := busySlot(vm); busy {
		return nil // the media change will wake us
	}
	if _, failed := failedSlot(vm); failed {
		_, err := r.s.w.Power(ctx, key, func(vm *apply.VM, p *apply.PowerChange) error {
			s, failed := failedSlot(vm)
			if !vm.Power.OnDeferred || !failed {
				return apply.ErrNoChange
			}
			p.Intent = system.PowerIntent{DroppedReason: fmt.Sprintf("virtual media %s failed: %s", s.Slot, s.Reason)}
			return nil
		})
		if err != nil {
			return fmt.Errorf("drop deferred power-on of %s: %w", key, err)
		}
		logctx.From(ctx).Info("deferred power-on dropped: media import failed", "vm", key)
		return nil
	}
	if _, err := r.s.start(ctx, key); err != nil && !errors.Is(err, apply.ErrNoChange) {
		return err
	}
	return nil
}
