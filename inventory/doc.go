// Package inventory holds the bridge's read caches: shared informers over
// KubeVirt VirtualMachines and VirtualMachineInstances (kubevirt.io/v1,
// through the dynamic client, as unstructured objects) and core
// PersistentVolumeClaims, optionally scoped to a list of namespaces.
//
// Every read the bridge serves comes from these caches; the only live GET is
// apply/'s re-read after a 409 Conflict. Reconcilers subscribe with
// [Inventory.AddVMHandler] and get the VM's key on every VM or VMI change.
//
// The package writes nothing.
package inventory
