// Package inventory holds the bridge's read caches: shared informers over
// KubeVirt VirtualMachines and VirtualMachineInstances (kubevirt.io/v1,
// through the dynamic client, as unstructured objects) and core
// PersistentVolumeClaims, optionally scoped to a list of namespaces.
//
// Every read the bridge serves comes from these caches; the only live GET is
// apply/'s re-read after a 409 Conflict. Reconcilers subscribe with
// [Inventory.AddVMHandler] and get the VM's key on every VM or VMI change.
//
// Objects are trimmed before they enter a cache (trim.go): no managedFields
// (a VM's are kept aside per version, [Inventory.VMManagedFields], for the
// Writer's ownership decisions), no kubectl last-applied annotation, and a
// VMI's spec holds only domain.firmware.uuid and domain.rebootPolicy. A new
// reader of another VMI spec field must add it to trimVMI.
// [Inventory.Membership] moves when a VM is added, deleted or relabelled:
// the Redfish collections are kept rendered while it stays.
//
// The package writes nothing.
package inventory
