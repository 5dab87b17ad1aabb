package inventory

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// The caches hold every VM, VMI and image PVC the bridge may serve; at
// 10,000 VMs their size is the bridge's size. Objects are trimmed before
// they enter a cache (informer transforms), keeping only what the bridge
// reads:
//
//   - managedFields go: as unstructured maps they were 60% of a cached VM
//     (11 of 18.6 KB) and VMI. What the Writer's ownership decisions read
//     of a VM's managedFields is kept aside in compact form (the FieldsV1
//     JSON) per VM and resourceVersion: [Inventory.VMManagedFields].
//     VMIs' and PVCs' are not read at all.
//   - a VM is rebuilt from the fields read ([CompactVM], trimvm.go), which
//     drops kubectl's last-applied-configuration annotation (a copy of the
//     object as its author last applied it) with every other annotation
//     but the bridge's.
//   - a VMI is rebuilt from the few fields read (trimVMI): of its spec
//     spec.domain.firmware.uuid (the System's UUID),
//     spec.domain.firmware.bootloader (the firmware the running system
//     booted: Bios and SecureBootCurrentBoot) and spec.domain.rebootPolicy
//     (what the running VMI does on a guest reboot); of its status the
//     phase, conditions, phaseTransitionTimestamps (Health, BootProgress)
//     and each interface's name and MAC; of its metadata identity, UID,
//     resourceVersion and the creation and deletion marks (no labels,
//     annotations, owners or finalizers).
//   - a VM and a VMI so rebuilt are packed ([packedObject], vmrecord.go,
//     vmcodec.go): their identity typed, the rest encoded in one string
//     unpacked per read; the strings every object repeats (map keys,
//     common values) are kept once and packed as an index (vmintern.go),
//     identities of the same labels share one map (labelsets.go).
//     Measured on the demo (TestCachedBytesPerObject): a running VMI
//     9.9 KB of heap whole, 5.6 KB rebuilt as unstructured maps, 0.8 KB
//     packed; the VM 16.1, 11.5 and 1.4 KB (the managedFields kept aside
//     shared with the VMs of the same: 2.3 KB when no two VMs share them).
//   - a PVC is kept as its identity, phase and storage request and
//     capacity only (a System's disk sizes, [cachedPVC]): 2.9 KB of heap
//     whole, 2.2 KB as a trimmed PersistentVolumeClaim (the typed struct
//     and its two quantity maps), 0.7 KB as a cachedPVC
//     (TestCachedBytesPerObject).

// vmiMetadataKept are the metadata fields a cached VMI keeps.
var vmiMetadataKept = []string{"name", "namespace", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"}

// trimVMI is the VMI informer's transform: the VMI is rebuilt from the
// fields read (see above) and packed ([packedObject]).
func trimVMI(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // trimmed already, or a tombstone of a trimmed object
	}
	kept := map[string]any{}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := u.Object[k]; ok {
			kept[k] = v
		}
	}
	if meta, ok := u.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(vmiMetadataKept))
		for _, k := range vmiMetadataKept {
			if v, ok := meta[k]; ok {
				m[k] = v
			}
		}
		kept["metadata"] = m
	}
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		m := map[string]any{}
		for _, p := range []kubevirt.Path{kubevirt.SpecFirmwareUUID, kubevirt.SpecBootloader, kubevirt.SpecRebootPolicy} {
			copyAt(m, spec, p)
		}
		kept["spec"] = m
	}
	if _, ok := u.Object["status"].(map[string]any); ok {
		kept["status"] = map[string]any{}
		for _, p := range []kubevirt.Path{kubevirt.VMIPhase, kubevirt.VMIConditions, kubevirt.VMIPhaseTransitions} {
			copyAt(kept, u.Object, p)
		}
		if ifaces, ok := nestedNoCopy(u.Object, kubevirt.VMIInterfaces).([]any); ok {
			out := make([]any, 0, len(ifaces))
			for _, i := range ifaces {
				m, _ := i.(map[string]any)
				e := map[string]any{}
				for _, k := range []string{kubevirt.KeyName, kubevirt.VMIInterfaceMAC} {
					if v, ok := m[k]; ok {
						e[k] = v
					}
				}
				out = append(out, e)
			}
			putAt(kept, kubevirt.VMIInterfaces, out)
		}
	}
	u.Object = kept
	return newPackedObject(u), nil
}

// nestedNoCopy is the value at p in m, nil when absent.
func nestedNoCopy(m map[string]any, p kubevirt.Path) any {
	v, found, err := unstructured.NestedFieldNoCopy(m, p...)
	if !found || err != nil {
		return nil
	}
	return v
}

// copyAt sets the value at p in from, when there is one, at p in to
// (shared, not copied).
func copyAt(to, from map[string]any, p kubevirt.Path) {
	if v, found, err := unstructured.NestedFieldNoCopy(from, p...); found && err == nil {
		putAt(to, p, v)
	}
}

// putAt sets v at p in m, making the maps on the way.
func putAt(m map[string]any, p kubevirt.Path, v any) {
	for _, k := range p[:len(p)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[p[len(p)-1]] = v
}

// trimPVC is the PVC informer's transform: a [cachedPVC] holding its
// identity, phase and storage request and capacity (a System's disk
// sizes), nothing else.
func trimPVC(obj any) (any, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return obj, nil // trimmed already, or a tombstone of a trimmed object
	}
	kept := &cachedPVC{ObjectMeta: metav1.ObjectMeta{
		Name: pvc.Name, Namespace: pvc.Namespace, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion,
		DeletionTimestamp: pvc.DeletionTimestamp,
	}, phase: pvc.Status.Phase}
	kept.request, kept.hasRequest = pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	kept.capacity, kept.hasCapacity = pvc.Status.Capacity[corev1.ResourceStorage]
	return kept, nil
}
