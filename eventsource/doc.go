// Package eventsource decides what is an event: it watches the VMs and
// VMIs every replica already caches (the inventory) and publishes on the
// replica's [event.Bus] one [event.Event] per change a Redfish client
// reads, with the DMTF message of package event/registry:
//
//   - a System created or removed (ResourceCreated, ResourceRemoved);
//   - its PowerState changed, whoever changed it: the bridge, a guest
//     shutdown, a `virtctl stop` or a runStrategy written by someone else
//     (ResourcePoweredOn, ResourcePoweringOn, ResourcePoweredOff,
//     ResourcePoweringOff, ResourcePaused);
//   - its Status.Health changed (ResourceStatusChangedOK, Warning,
//     Critical);
//   - its BootProgress changed, or a Once boot override was consumed
//     (ResourceChanged);
//   - a virtual-media slot inserted or ejected (ResourceChanged), imported
//     (ResourceStateChanged to Enabled) or failed (ResourceErrorsDetected),
//     and the insert's Task started, progressed, completed, aborted or
//     removed by another insert (TaskEvent).
//
// Every replica runs a source (the manager's Servers group: a replica is
// ready once its source watches, so what reads its events misses nothing
// from then on) and publishes the same change under the same [event.Event.ID]: a hash of the VM's UID,
// the resourceVersion of the object carrying the change (the VMI's for
// what the VMI decides, the VM's for what the VM records), the MessageId
// and its arguments. A replica that starts reads every cached VM first
// and reports changes from there: a restart or a watch's relist
// does not replay the fleet as created. A change that happened while no
// replica ran is not reported (nothing recorded it); the state it left is
// what a client reads.
package eventsource
