// Package kubevirt is the bridge's one vocabulary for KubeVirt, built on
// kubevirt.io/api (v1.9.0) types and constants: what the bridge knows of
// KubeVirt is spelled here and nowhere else.
//
//   - Resources: the VirtualMachine and VirtualMachineInstance
//     GroupVersionResources and the VirtualMachine CRD's name
//     (resources.go).
//   - Field paths: every path the bridge reads or writes in a VM or VMI
//     (disks, interfaces, volumes, firmware.bootloader and its efi,
//     features.smm, rebootPolicy, runStrategy, status.stateChangeRequests,
//     status.phase...), derived from the Go fields of kubevirt.io/api's types
//     through their JSON tags, so a path that is not in the API fails at
//     init, not at a customer (paths.go).
//   - Values: VMI phases, run strategies, state-change actions, condition
//     types, printable statuses and the rebootPolicy Terminate, as
//     kubevirt.io/api's constants (values.go).
//   - Readers of unstructured VMs and VMIs, as the informer cache holds
//     them: disks, interfaces, volumes, conditions, phase, run strategy,
//     state change requests (readers.go, vmi.go) and the firmware a VM boots
//     (firmware.go, the one answer for Redfish reads and write decisions).
//
// Readers never copy and never fail: a VM written by anyone may lack any
// field, and a missing or mistyped field reads as its zero value. The
// package writes nothing; apply/ builds the apply bodies from these paths.
// Only this package imports kubevirt.io/api (guard_test.go keeps it so).
package kubevirt
