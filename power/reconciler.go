package power

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Events is the VM/VMI change feed (inventory.Inventory implements it).
type Events = controller.Handlers

// Reconciler finishes what a request started, driven by VM and VMI
// changes: (a) reverts a Once override after exactly one boot, (b) starts
// the VM again after a guest reboot ended the VMI that booted it
// (reboot.go), (c) runs, cancels or drops a held power-on (hold.go), (d) re-lays out boot
// orders when disks changed under a pending override. It runs on the
// controller engine, one leadership term per [Reconciler.Run].
type Reconciler struct {
	s      *Service
	events Events
	ctrl   *controller.Controller
}

// NewReconciler returns a Reconciler fed by events, with workers workers
// (at least 1); call Run for each term.
func NewReconciler(s *Service, events Events, workers int) *Reconciler {
	return &Reconciler{s: s, events: events, ctrl: controller.New("power", controller.Options{Workers: workers})}
}

// Controller is the engine the terms run on (its Stats are cumulative).
func (r *Reconciler) Controller() *controller.Controller { return r.ctrl }

// Run runs one term: it subscribes to events and works the queue until
// ctx ends, then unsubscribes. It logs with the logger in ctx, named
// controller=power.
func (r *Reconciler) Run(ctx context.Context) error {
	ctx = logctx.Into(ctx, logctx.From(ctx).With("controller", "power"))
	if err := r.ctrl.Run(ctx, controller.ReconcileFunc(func(ctx context.Context, key system.Key) (controller.Result, error) {
		return controller.Result{}, r.Reconcile(ctx, key)
	}), controller.VMEvents(r.events)); err != nil {
		return fmt.Errorf("power reconciler: %w", err)
	}
	return nil
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

// deferred runs a held power-on once the imports it awaits are done, and
// cancels or drops it as hold.go says. While it waits, the VM is looked at
// again at its deadline (no VM change may come before it).
func (r *Reconciler) deferred(ctx context.Context, key system.Key, vm *apply.VM) error {
	now := r.s.now()
	switch v, _ := r.s.judge(vm, now); v {
	case heldNone:
		return nil
	case heldWait:
		r.ctrl.AddAfter(key, r.s.holdDeadline(vm.Power).Sub(now)+time.Second)
		return nil // the media change will wake us sooner
	case heldRun:
		logctx.From(ctx).Info("held power-on runs: its media imports completed", "vm", key)
		_, err := r.s.startIf(ctx, key, func(vm *apply.VM) bool {
			// On the fresh read: still held and due, or (the Start request
			// after the power write) meant to run: a power-off, eject or
			// deadline in between wins.
			v, _ := r.s.judge(vm, r.s.now())
			return v == heldRun || (!vm.Power.OnDeferred && meantToRun(vm))
		}, nil)
		if err != nil && !errors.Is(err, apply.ErrNoChange) {
			return err
		}
		return nil
	}
	return r.endHold(ctx, key)
}

// endHold cancels or drops a held power-on, as judged on the fresh read.
func (r *Reconciler) endHold(ctx context.Context, key system.Key) error {
	var v verdict
	var reason string
	_, err := r.s.w.Power(ctx, key, func(vm *apply.VM, p *apply.PowerChange) error {
		v, reason = r.s.judge(vm, r.s.now())
		switch v {
		case heldCancel:
			p.Intent = system.PowerIntent{}
		case heldDrop, heldExpired:
			p.Intent = system.PowerIntent{DroppedReason: reason}
		default:
			return apply.ErrNoChange
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("end held power-on of %s: %w", key, err)
	}
	log := logctx.From(ctx)
	switch v {
	case heldRun, heldWait: // the cached read was behind: decide again
		r.ctrl.Add(key)
	case heldCancel:
		log.Info("held power-on cancelled: an awaited insert was ejected", "vm", key, "reason", reason)
	case heldDrop:
		log.Info("held power-on dropped: media import failed", "vm", key, "reason", reason)
	case heldExpired:
		log.Warn("held power-on expired: the VM stays off", "vm", key, "reason", reason)
	}
	return nil
}
