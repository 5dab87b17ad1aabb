// Package inventory holds the bridge's read caches: shared informers over
// KubeVirt VirtualMachines and VirtualMachineInstances (kubevirt.io/v1,
// through the dynamic client, read as unstructured objects) and core
// PersistentVolumeClaims, optionally scoped to a list of namespaces.
//
// Reads of VMs, VMIs and PVCs come from these caches. The live GETs are the
// exceptions, each where a stale cache would mislead a decision: apply/
// re-reads the VM after a 409 Conflict and before trusting "nothing to
// change" decided on a cached read; power/ confirms a refusal and whether a
// VMI still lives; media/ reads its import pods and CA ConfigMaps (not
// cached here). Reconcilers subscribe with [Inventory.AddVMHandler] and get
// the VM's key on every VM or VMI change, the objects already cached
// included, until they remove the handler (a leadership term's end).
// [Inventory.Changed] wakes a writer waiting for the cache to show its
// write at the VM's next change (notify.go).
//
// Objects are trimmed before they enter a cache (trim.go, trimvm.go): no
// managedFields (of a VM's, what the Writer's ownership decisions read is
// kept aside per version, [Inventory.VMManagedFields]), no kubectl
// last-applied annotation, and a VM and a VMI keep only what is read of
// them. A VM ([CompactVM]): identity, labels, the bridge's annotations,
// runStrategy, the template's disks, interfaces and volumes whole, its
// firmware bootloader and uuid, rebootPolicy, cpu, memory and resources,
// printableStatus, stateChangeRequests and the Failure and
// RestartRequired conditions. A VMI: of its spec domain.firmware.uuid,
// domain.firmware.bootloader and domain.rebootPolicy; of its status phase,
// conditions, phaseTransitionTimestamps and the interfaces' names and MACs;
// of its metadata identity, UID, resourceVersion and creation and deletion
// marks. A new reader of another VM or VMI field must add it to CompactVM
// or trimVMI (TestTrimVMKeepsWhatIsRead, TestTrimVMIKeepsWhatIsRead).
// The cache holds a trimmed VM or VMI packed (vmrecord.go, vmcodec.go):
// its identity typed, the rest encoded in one string; [Inventory.VM] and
// [Inventory.VMI] unpack one per call, [Inventory.ListVMs] and the
// resourceVersion readers ([Inventory.VMResourceVersion]) read the
// identity only. A PVC is a small typed record ([Inventory.PVC] rebuilds
// the trimmed PersistentVolumeClaim). 1.4 KB of heap per VM, 0.8 KB per
// VMI, 0.7 KB per PVC (TestCachedBytesPerObject).
// [Inventory.Membership] moves when a VM is added, deleted or relabelled:
// the Redfish collections are kept rendered while it stays.
//
// The package writes nothing.
package inventory
