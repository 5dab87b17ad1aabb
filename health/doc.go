// Package health derives what Redfish shows of a system's condition from
// its VirtualMachine and VirtualMachineInstance: ComputerSystem
// Status.Health (Ironic's node.health) and BootProgress (LastState,
// LastStateTime; Ironic polls it while a BIOS change waits for a reboot).
//
// It reads only; nothing here is recorded anywhere. The mapping is kept to
// what KubeVirt really tells:
//
//	Health   Critical  the VMI Failed (guest crashed, start failed), the VM's
//	                   Failure condition is True (virt-controller could not
//	                   create the VMI), or its printableStatus is an error
//	                   (CrashLoopBackOff, ErrorUnschedulable, ErrImagePull,
//	                   ImagePullBackOff, ErrorPvcNotFound, DataVolumeError,
//	                   Unknown), or the VMI is paused on an I/O error
//	         Warning   a virtual-media import Failed, or a deferred power-on
//	                   was dropped (its import failed)
//	         OK        otherwise
//
//	BootProgress  None           no VMI, a final or deleted VMI, or one not
//	                             Running yet (Pending, Scheduling, Scheduled)
//	              OSBootStarted  the VMI is Running: QEMU runs the virtual
//	                             firmware, which boots at once; without a
//	                             guest agent nothing later is visible
//	              OSRunning      Running and the AgentConnected condition is
//	                             True (the guest OS runs its agent)
//
// LastStateTime is the VMI's phaseTransitionTimestamps entry of the phase
// the state was entered with (the AgentConnected condition's transition
// time for OSRunning, the deletion time for a VMI being deleted); null when
// there is no VMI or KubeVirt recorded no time.
package health
