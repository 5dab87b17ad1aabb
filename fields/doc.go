// Package fields explains who owns what on a VirtualMachine: it parses the
// VM's managedFields per field manager, marks the bridge's managers, and
// checks the ownership against the table of apply/doc.go, which [Table]
// encodes as data (the one place outside that comment).
//
// # Deviations
//
// A deviation is one of:
//
//   - outside: a bridge manager (redfish-media, redfish-boot, redfish-power)
//     owns a path outside its allowed set in the VM's list mode.
//   - taken: another manager owns a path the bridge has claimed:
//     (a) any metadata.annotations[redfish-bridge.io/*] (the bridge's own
//     annotation prefix; nobody else writes it) but redfish-bridge.io/ipmi-port,
//     which the VM's author writes and the bridge only reads (ipmi.PortAnnotation);
//     (b) map mode: any field of the disk or volume media-<slot> while the
//     VM carries the annotation redfish-bridge.io/media.<slot> (the media
//     manager's CD-ROM);
//     (c) map mode: a bootOrder of any disk or interface while redfish-boot
//     owns at least one bootOrder (a boot override is being applied).
//
// spec.runStrategy is not in the "taken" list although redfish-power forces
// it: when another writer (kubectl edit, virt-api's start/stop) changes it
// later, the apiserver moves the field to that writer and drops
// redfish-power's managedFields entry if runStrategy was its only field, so
// managedFields keep no trace that the bridge ever claimed it, and the
// result is indistinguishable from the VM author's ownership before the
// bridge wrote. The report adds a note instead when a bridge manager has
// written the VM and runStrategy belongs to someone else.
//
// # Objects the bridge made
//
// [InspectObjects] adds the objects in the VM's namespace with media's
// part-of label and an ownerReference to the VM's UID (media slot PVC or
// DataVolume, import and check pods, import Secret/ConfigMap, trust
// ConfigMap, image cache entries and their CA ConfigMaps), each with its
// role (from the component label) and its managedFields entries. One more
// deviation kind applies to them:
//
//   - foreign: on a PVC, pod, Secret or ConfigMap of the bridge's, a
//     manager other than its creator (the entry owning the part-of label;
//     [ManagerServe] in the served image, as media creates without a
//     fieldManager), a bridge manager (redfish-media writes the Secrets
//     and ConfigMaps), one of [StatusWriters], or a write of the status
//     subresource. DataVolumes are listed only: CDI's controller writes
//     their metadata under a name that depends on its build. Objects being
//     deleted are listed only: whoever guards a finalizer removes it.
//
// Before the bridge ever wrote a VM nothing is claimed: the VM's author
// owning runStrategy, bootOrder or the disk lists is normal, not a
// deviation. In atomic mode whole lists change hands by design (whoever
// wrote the list last owns it), so list ownership is never a deviation.
package fields
