package inventory

import (
	"fmt"

	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// AddVMHandler calls handle with the VM's key whenever a VM or its VMI is
// added, updated or deleted (a VMI has its VM's namespace and name). It also
// replays every object already in the caches. handle must be fast: enqueue,
// do not work.
func (inv *Inventory) AddVMHandler(handle func(key system.Key)) error {
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(handle, obj) },
		UpdateFunc: func(_, obj any) { enqueue(handle, obj) },
		DeleteFunc: func(obj any) { enqueue(handle, obj) },
	}
	for ns, s := range inv.scopes {
		for _, inf := range []cache.SharedIndexInformer{s.vms, s.vmis} {
			if _, err := inf.AddEventHandler(h); err != nil {
				return fmt.Errorf("inventory: add VM handler in %q: %w", ns, err)
			}
		}
	}
	return nil
}

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
