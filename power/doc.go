// Package power owns the power concern of a system: its Redfish PowerState
// (derived from the VirtualMachine and its VirtualMachineInstance, never
// stored), the #ComputerSystem.Reset actions, the boot override (Once or
// Continuous, and its revert after exactly one boot) and the deferral of a
// power-on until every virtual-media import has finished.
//
// Writes to the VirtualMachine go through apply.Writer under the
// redfish-power (spec.runStrategy, power annotation, status.stateChangeRequests)
// and redfish-boot (boot orders, bootloader, boot annotation) field managers.
// The package never writes or deletes a VirtualMachineInstance: virt-controller
// deletes and creates them on these writes. (A delete would force nothing:
// virt-handler stops the guest within the VMI's terminationGracePeriodSeconds
// whatever grace the delete asked for, and it races virt-controller's view of
// the VM, which can start a new VMI for a power-off.)
//
// ForceOff and ForceRestart shorten that grace period through virt-api, the
// only writer allowed to change a VMI's spec (a [Forcer], package virtapi;
// force.go): ForceOff applies runStrategy Halted, then asks virt-api's
// stop with grace period 0; ForceRestart asks virt-api's restart with grace
// period 0 (grace 1, Stop(uid)+Start) instead of its own requests, or, while
// another state change request is pending (virt-api's restart refuses to add
// to a non-empty list), virt-api's stop with grace period 0 followed by its
// own Start. Where kube-apiserver does not serve
// virt-api's subresource API (no virt-api: most test clusters and `make
// demo`) the Service logs a warning once and both stay graceful.
//
// Power-on sets runStrategy RerunOnFailure, so a guest-initiated shutdown
// leaves the system Off (as on bare metal) while a crash restarts it. Because
// virt-controller then starts a VMI only when the strategy changes or on a
// Start request, power-on also appends a Start request when the VM was not
// already on, and a restart appends Stop(uid)+Start, exactly what virt-api's
// start and restart subresources do; deleting the VMI alone would leave the
// VM off. Power-off withdraws a pending Start first.
// A Once override is reverted when the next VMI runs; that VMI carries the
// rebootPolicy Terminate redfish-boot armed with the override, so a reboot
// its guest does itself ends it, and the [Reconciler] starts the VM again
// (from the disk) where KubeVirt does not: see reboot.go for what KubeVirt
// v1.9 does, and why PowerState stays On across it.
// Power-on while any media slot is Pending or Importing is held: it records
// OnDeferred (with its deadline and the inserts it awaits) on the VM
// instead, and the System shows PoweringOn meanwhile; the [Reconciler]
// starts the VM when those imports are done. A power-off or an eject of an
// awaited insert cancels it, a failed import or its deadline
// (--held-power-on-timeout) drops it (DroppedReason): see hold.go. Reset types
// outside [system.ResetTypes] (Nmi: KubeVirt cannot inject one) are
// refused with [ErrInvalid] (an [*apply.RefusedError] naming ResetType).
// A power-on while the VM is still stopping gracefully, or one whose write
// kept meeting a moving target, is refused for now with a
// [*ResetConflictError] (conflict.go), which the client retries; an
// accepted power-on reads PoweringOn until the VM runs (state.go).
package power
