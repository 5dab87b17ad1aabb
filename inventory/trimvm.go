package inventory

import (
	"bytes"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// A cached VM keeps what the bridge reads of it (CompactVM):
//
//   - metadata: identity, UID, resourceVersion, the deletion mark, the
//     labels (the collections' selectors) and the
//     bridge's own annotations (redfish-bridge.io/: media slots, boot
//     override, power intent); no other annotations, owners or finalizers.
//   - spec: runStrategy and, of the template spec, the disks, interfaces and
//     volumes lists whole (in atomic mode the Writer re-applies them as
//     read, every field of every entry), firmware.bootloader and
//     firmware.uuid, rebootPolicy, cpu, memory.guest and resources (the
//     System's firmware, processors and memory); not the template's
//     metadata, networks or other domain fields.
//   - status: printableStatus, stateChangeRequests and the conditions read
//     (Failure, RestartRequired: a System's health and restart flag), each
//     with its type, status, reason and lastTransitionTime.
//
// A new reader of another VM field (or condition) must add it here.
//
// Its managedFields are kept aside (VMManagedFields) as the Writer's
// ownership decisions use them: the bridge's managers' entries
// (redfish-media, -boot, -power: what they own), and of every other
// manager only what it owns under firmware.bootloader.efi (who else owns
// efi or its secureBoot: ValidateLegacy, ResetOverride); manager,
// operation, subresource and fields only, each distinct set kept once for
// the VMs sharing it (ownersets.go). The compact VM is then packed
// ([packedObject]). Measured on vm-0 of the demo (TestCachedBytesPerObject):
// 1.4 KB of heap (2.3 KB when its managedFields are its own), see
// docs/configuration.md.

// bridgeAnnotationPrefix prefixes every annotation the bridge writes on a
// VM (apply.AnnotationMediaPrefix, AnnotationBoot, AnnotationPower).
const bridgeAnnotationPrefix = "redfish-bridge.io/"

// bridgeManagers are the Writer's field managers (apply.ManagerMedia,
// ManagerBoot, ManagerPower, ManagerProtocols): their managedFields
// entries are kept whole.
var bridgeManagers = map[string]bool{"redfish-media": true, "redfish-boot": true, "redfish-power": true, "redfish-protocols": true}

// vmMetadataKept are the metadata fields a cached VM keeps besides its
// bridge annotations (at most 8 keys: a small map).
var vmMetadataKept = []string{"name", "namespace", "uid", "resourceVersion", "deletionTimestamp", "labels"}

// vmSpecKept are the template spec paths a cached VM keeps.
var vmSpecKept = []kubevirt.Path{kubevirt.SpecDisks, kubevirt.SpecInterfaces, kubevirt.SpecVolumes,
	kubevirt.SpecBootloader, kubevirt.SpecFirmwareUUID, kubevirt.SpecRebootPolicy, kubevirt.SpecCPU,
	kubevirt.SpecGuestMemory, kubevirt.SpecResources}

// vmConditionsKept are the types of the VM conditions read (a System's
// Status.Health and its restart-required flag); conditionKept are the keys
// a cached condition keeps.
var (
	vmConditionsKept = []string{kubevirt.ConditionFailure, kubevirt.ConditionRestartRequired}
	conditionKept    = []string{"type", "status", "reason", "lastTransitionTime"}
)

// efiFields is firmware.bootloader.efi as a managedFields path.
var efiFields = fieldpath.MakePathOrDie(kubevirt.EFI.Any()...)

// CompactVM returns what the VM cache keeps of vm: a VM holding only the
// fields the bridge reads (sharing their values with vm), and the part of
// its managedFields the Writer's ownership decisions read.
func CompactVM(vm *unstructured.Unstructured) (*unstructured.Unstructured, []metav1.ManagedFieldsEntry) {
	owners := compactOwners(vm.GetManagedFields())
	kept := map[string]any{}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := vm.Object[k]; ok {
			kept[k] = v
		}
	}
	if meta, ok := vm.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(vmMetadataKept)+1)
		for _, k := range vmMetadataKept {
			if v, ok := meta[k]; ok {
				m[k] = v
			}
		}
		if a, ok := meta["annotations"].(map[string]any); ok {
			ours := map[string]any{}
			for k, v := range a {
				if strings.HasPrefix(k, bridgeAnnotationPrefix) {
					ours[k] = v
				}
			}
			if len(ours) > 0 {
				m["annotations"] = ours
			}
		}
		kept["metadata"] = m
	}
	if _, ok := vm.Object["spec"].(map[string]any); ok {
		kept["spec"] = map[string]any{}
		copyAt(kept, vm.Object, kubevirt.RunStrategy)
		if spec := kubevirt.TemplateSpecOf(vm); spec != nil {
			m := map[string]any{}
			for _, p := range vmSpecKept {
				copyAt(m, spec, p)
			}
			putAt(kept, kubevirt.TemplateSpec, m)
		}
	}
	if _, ok := vm.Object["status"].(map[string]any); ok {
		kept["status"] = map[string]any{}
		copyAt(kept, vm.Object, kubevirt.PrintableStatus)
		copyAt(kept, vm.Object, kubevirt.StateChangeRequests)
		if conds, ok := nestedNoCopy(vm.Object, kubevirt.VMConditions).([]any); ok {
			out := make([]any, 0, len(vmConditionsKept))
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if typ, _ := m["type"].(string); !slices.Contains(vmConditionsKept, typ) {
					continue
				}
				e := make(map[string]any, len(conditionKept))
				for _, k := range conditionKept {
					if v, ok := m[k]; ok {
						e[k] = v
					}
				}
				out = append(out, e)
			}
			putAt(kept, kubevirt.VMConditions, out)
		}
	}
	return &unstructured.Unstructured{Object: kept}, owners
}

// compactOwners keeps of entries what the Writer reads: the bridge's
// managers' entries, and other managers' fields under
// firmware.bootloader.efi (entries owning nothing there are dropped).
// Never nil when entries is not empty: an empty result still answers
// "these are the owners of this version".
func compactOwners(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	if len(entries) == 0 {
		return nil
	}
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for _, e := range entries {
		if e.FieldsV1 == nil {
			continue
		}
		fields := e.FieldsV1
		if !bridgeManagers[e.Manager] {
			if fields = efiOnly(fields); fields == nil {
				continue
			}
		}
		out = append(out, metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: e.Operation,
			Subresource: e.Subresource, FieldsV1: fields})
	}
	return out
}

// efiOnly is the part of fields under firmware.bootloader.efi, nil when
// none. Fields that do not parse are kept whole: the Writer meets the same
// parse error it would have met on the whole entry.
func efiOnly(fields *metav1.FieldsV1) *metav1.FieldsV1 {
	raw := fields.GetRawBytes()
	if !bytes.Contains(raw, []byte(`"f:`+kubevirt.KeyEFI+`"`)) {
		return nil // owns nothing under any efi
	}
	var all fieldpath.Set
	if err := all.FromJSON(bytes.NewReader(raw)); err != nil {
		return fields
	}
	efi := &fieldpath.Set{}
	all.Iterate(func(p fieldpath.Path) {
		if len(p) >= len(efiFields) && p[:len(efiFields)].Equals(efiFields) {
			efi.Insert(p)
		}
	})
	if efi.Empty() {
		return nil
	}
	out, err := efi.ToJSON()
	if err != nil {
		return fields
	}
	return metav1.NewFieldsV1(string(out))
}

// vmOwners keeps the managedFields of the cached VMs, by VM.
type vmOwners struct {
	mu sync.RWMutex
	m  map[system.Key]vmOwnersEntry
	// sets are the distinct managedFields the entries of m share.
	sets ownerSets
}

type vmOwnersEntry struct {
	resourceVersion string
	fields          *ownerSet
	// decided is the decision made from fields ([Inventory.VMOwnersDecision]),
	// nil until one is asked for.
	decided any
}

// trimVM is the VM informer's transform: the VM is cut to [CompactVM],
// packed into a [packedObject], and the managedFields it keeps move to
// inv.owners. An object already trimmed (or a tombstone) passes as is.
// Transforms run before the cache is updated, so the entry kept may be a
// newer version than the cache shows for a moment (never an older one):
// [Inventory.VMManagedFields] answers only for the version asked.
func (inv *Inventory) trimVM(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	kept, fields := CompactVM(u)
	if fields != nil {
		key := system.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
		inv.owners.mu.Lock()
		old, had := inv.owners.m[key]
		inv.owners.m[key] = vmOwnersEntry{resourceVersion: u.GetResourceVersion(), fields: inv.owners.sets.acquire(fields)}
		if had {
			inv.owners.sets.release(old.fields)
		}
		inv.owners.mu.Unlock()
	}
	return newPackedObject(kept), nil
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
			inv.owners.sets.release(e.fields)
		}
	}}
}

// VMManagedFields returns what the Writer reads of the managedFields of VM
// key at resourceVersion ([CompactVM]), which the cached VM does not carry;
// false when that version's are not known (the cache is about to show a
// newer version: read live). The
// entries are shared: do not modify them.
func (inv *Inventory) VMManagedFields(key system.Key, resourceVersion string) ([]metav1.ManagedFieldsEntry, bool) {
	inv.owners.mu.RLock()
	defer inv.owners.mu.RUnlock()
	e, ok := inv.owners.m[key]
	if !ok || e.resourceVersion != resourceVersion {
		return nil, false
	}
	return e.fields.fields, true
}
