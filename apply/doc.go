// Package apply is the only package that writes KubeVirt VirtualMachines.
//
// Every write is a Kubernetes Server-Side Apply under one of three field
// managers, one per concern. Each manager's builder turns the concern's
// complete intent (never a delta: in SSA omission deletes) into a minimal
// unstructured apply body. Concern packages (media/, power/) decide WHAT the
// intent is through a change function; this package reads the VM, calls the
// change function, builds the body, applies it and retries on conflict.
//
// # Field managers and what they own
//
// T below is spec.template.spec; <slot> is a virtual-media slot id (cd0, ...)
// and its CD-ROM disk and volume are both named "media-<slot>".
//
//	manager        map mode (disks/volumes/interfaces are list-type map)             atomic mode (stock KubeVirt CRD)
//	-------------  ----------------------------------------------------------------  ----------------------------------------------
//	redfish-media  metadata.annotations[redfish-bridge.io/media.<slot>]              same annotations
//	               T.domain.devices.disks[name=media-<slot>]: name, cdrom.bus,       T.domain.devices.disks (whole list) and
//	                 cdrom.readonly (while the slot holds an image)                  T.volumes (whole list), when media wrote
//	               T.volumes[name=media-<slot>]: name,                                 them last
//	                 persistentVolumeClaim.claimName (same)
//	redfish-boot   metadata.annotations[redfish-bridge.io/boot]                      same annotation
//	               T.domain.devices.disks[name=*].bootOrder for every disk, while    T.domain.devices.disks (whole list) when boot
//	                 an override target other than None is set                         wrote it last
//	               T.domain.devices.interfaces[name=<first>].bootOrder (target Pxe)  T.domain.devices.interfaces (whole list), Pxe
//	               T.domain.firmware.bootloader.{efi|bios} once a mode was set       same
//	redfish-power  metadata.annotations[redfish-bridge.io/power]                     same
//	               spec.runStrategy                                                  same
//
// Nothing else is ever written: not labels, not other disks' fields, not
// status. Fields of other writers (the VM's author, kubectl edit, client-side
// kubectl apply, virt-api, another SSA manager) stay theirs.
//
// # Preconditions, force and retries
//
// An apply body that carries metadata.resourceVersion is a precondition: the
// apiserver answers 409 if the VM changed since the read, even with force.
//
//   - Every apply whose content depends on what was read carries the
//     precondition: all redfish-media and redfish-boot applies (state
//     machine transitions, the boot-order rewrite that numbers every disk
//     it saw) and power-on (it checked that no import is in flight and that
//     the boot order is settled). On 409 the whole read-decide-apply step is
//     retried from a live read with bounded, jittered backoff.
//   - Force: redfish-boot forces (bootOrder and bootloader usually belong to
//     the VM's author, and the Redfish client has explicitly asked to change
//     exactly those fields); redfish-power forces spec.runStrategy (the VM's
//     author and virt-api own it; the Redfish power request is the authority
//     on power). redfish-media never forces in map mode: its entries are its
//     own, and a conflict there means someone else edited the bridge's
//     CD-ROM, which is reported, not overwritten. In atomic mode every
//     manager that writes a list forces, because the only way to change one
//     entry of an atomic list is to take the whole list; the precondition
//     guarantees the list written is the one just read plus this concern's
//     change, so nobody's concurrent edit is lost.
//
// # List mode
//
// [DetectMode] reads the installed VirtualMachine CRD: if
// T.domain.devices.disks and T.volumes declare x-kubernetes-list-type: map
// keyed by name, the bridge runs in map mode, otherwise atomic mode.
package apply
