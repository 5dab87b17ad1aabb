package inventory

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The caches hold every VM, VMI and image PVC the bridge may serve; at
// 10,000 VMs their size is the bridge's size. Objects are trimmed before
// they enter a cache (informer transforms), keeping only what the bridge
// reads:
//
//   - managedFields go: as unstructured maps they were 60% of a cached VM
//     (11 of 18.6 KB) and VMI. A VM's managedFields, which the Writer's
//     ownership decisions need, are kept aside in their compact form (the
//     FieldsV1 JSON) per VM and resourceVersion: [Inventory.VMManagedFields].
//     VMIs' and PVCs' are not read at all.
//   - kubectl's last-applied-configuration annotation goes (a copy of the
//     object as its author last applied it).
//   - a VMI's spec keeps only spec.domain.firmware.uuid (the System's UUID),
//     spec.domain.firmware.bootloader (the firmware the running system
//     booted: Bios and SecureBootCurrentBoot) and spec.domain.rebootPolicy
//     (what the running VMI does on a guest reboot); its status and
//     metadata stay whole.

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// trimMeta drops managedFields and the last-applied annotation.
func trimMeta(o metav1.Object) {
	o.SetManagedFields(nil)
	if a := o.GetAnnotations(); a != nil {
		if _, ok := a[lastApplied]; ok {
			delete(a, lastApplied)
			o.SetAnnotations(a)
		}
	}
}

// trimVMI is the VMI informer's transform.
func trimVMI(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // a tombstone: its object was trimmed on the way in
	}
	trimMeta(u)
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		kept := map[string]any{}
		for _, p := range []kubevirt.Path{kubevirt.SpecFirmwareUUID, kubevirt.SpecBootloader, kubevirt.SpecRebootPolicy} {
			if v, found, _ := unstructured.NestedFieldNoCopy(spec, p...); found {
				_ = unstructured.SetNestedField(kept, v, p...) // a string or a map of JSON values: never fails
			}
		}
		u.Object["spec"] = kept
	}
	return u, nil
}

// trimPVC is the PVC informer's transform.
func trimPVC(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		trimMeta(o)
	}
	return obj, nil
}

// vmOwners keeps the managedFields of the cached VMs, by VM.
type vmOwners struct {
	mu sync.RWMutex
	m  map[system.Key]vmOwnersEntry
}

type vmOwnersEntry struct {
	resourceVersion string
	fields          []metav1.ManagedFieldsEntry
}

// trimVM is the VM informer's transform: managedFields move to inv.owners.
// Transforms run before the cache is updated, so the entry kept may be a
// newer version than the cache shows for a moment (never an older one):
// [Inventory.VMManagedFields] answers only for the version asked.
func (inv *Inventory) trimVM(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	if fields := u.GetManagedFields(); len(fields) > 0 {
		key := system.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
		inv.owners.mu.Lock()
		inv.owners.m[key] = vmOwnersEntry{resourceVersion: u.GetResourceVersion(), fields: fields}
		inv.owners.mu.Unlock()
	}
	trimMeta(u)
	return u, nil
}

// forgetOwners is the VM informer's handler dropping a deleted VM's
// managedFields (unless a VM of the same name came since).
func (inv *Inventory) forgetOwners() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		o, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		key := system.Key{Namespace: o.GetNamespace(), Name: o.GetName()}
		inv.owners.mu.Lock()
		defer inv.owners.mu.Unlock()
		if e, ok := inv.owners.m[key]; ok && e.resourceVersion == o.GetResourceVersion() {
			delete(inv.owners.m, key)
		}
	}}
}

// VMManagedFields returns the managedFields of VM key at resourceVersion,
// which the cached VM no longer carries; false when that version's are
// not known (the cache is about to show a newer version: read live). The
// entries are shared: do not modify them.
func (inv *Inventory) VMManagedFields(key system.Key, resourceVersion string) ([]metav1.ManagedFieldsEntry, bool) {
	inv.owners.mu.RLock()
	defer inv.owners.mu.RUnlock()
	e, ok := inv.owners.m[key]
	if !ok || e.resourceVersion != resourceVersion {
		return nil, false
	}
	return e.fields, true
}
