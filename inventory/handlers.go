package inventory

import (
	"errors"
	"fmt"

	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// AddVMHandler calls handle with the VM's key whenever a VM or its VMI is
// added, updated or deleted (a VMI has its VM's namespace and name). It also
// replays every object already in the caches. handle must be fast: enqueue,
// do not work. remove unregisters handle from every informer (a
// reconciler's term calls it when it ends); after it returns, handle is
// called no more, but for a call under way.
func (inv *Inventory) AddVMHandler(handle func(key system.Key)) (remove func() error, err error) {
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(handle, obj) },
		UpdateFunc: func(_, obj any) { enqueue(handle, obj) },
		DeleteFunc: func(obj any) { enqueue(handle, obj) },
	}
	type registration struct {
		inf cache.SharedIndexInformer
		reg cache.ResourceEventHandlerRegistration
	}
	var regs []registration
	remove = func() error {
		var errs []error
		for _, r := range regs {
			if err := r.inf.RemoveEventHandler(r.reg); err != nil {
				errs = append(errs, fmt.Errorf("inventory: remove VM handler: %w", err))
			}
		}
		if regs != nil {
			inv.vmHandlers.Add(-1)
			regs = nil
		}
		return errors.Join(errs...)
	}
	inv.vmHandlers.Add(1)
	regs = []registration{} // counted: remove uncounts it once
	for ns, s := range inv.scopes {
		for _, inf := range []cache.SharedIndexInformer{s.vms, s.vmis} {
			reg, err := inf.AddEventHandler(h)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("inventory: add VM handler in %q: %w", ns, err), remove())
			}
			regs = append(regs, registration{inf, reg})
		}
	}
	return remove, nil
}

// VMHandlers is the number of VM handlers registered and not removed.
func (inv *Inventory) VMHandlers() int { return int(inv.vmHandlers.Load()) }

func enqueue(handle func(system.Key), obj any) {
	k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	ns, name, err := cache.SplitMetaNamespaceKey(k)
	if err != nil {
		return
	}
	handle(system.Key{Namespace: ns, Name: name})
}
