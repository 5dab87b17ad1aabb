// Package metal3 is the end-to-end test with metal3's baremetal-operator
// (BMO v0.13.2 and v0.14.0-rc.0, built by hack/bmo.sh from
// ../shared/third_party): a
// manager per CRD variant (stock and maplist) runs as a process against
// its demo's apiserver (BMO's CRDs installed, webhooks off) and drives
// Debian unstable's Ironic 39 (the chroot of hack/ironic-chroot.sh, run by
// harness/ironicproc), which drives the demo's bridge. A BareMetalHost
// per variant names its VM's System as a redfish-virtualmedia BMC and goes
// through BMO's states as a user's would: registering -> available
// (inspection disabled, automated cleaning off), its HostFirmwareSettings
// showing the System's Bios attributes and its FirmwareSchema the
// bridge's AttributeRegistry (Ironic's default bios interface is redfish
// here), a BMCEventSubscription creating the bridge's event subscription
// through Ironic's vendor passthru (its receiver hears the host power on
// with the headers of its httpHeadersRef Secret; deleted, the
// subscription goes) -> SecureBoot Enabled in the HostFirmwareSettings' spec, applied
// in preparing (manual cleaning, bios.apply_configuration, no agent)
// before provisioning a live-iso image (Ironic's ramdisk deploy, booted
// from virtual media, no agent) -> provisioned, the VM and VMI with
// Secure Boot; online false and true stop and start the VM; removing the
// image deprovisions it back to available with the ISO ejected; delete
// takes the node out of Ironic and leaves the VM. Beside them, in the same
// clusters (BMO 0.14's CRDs, a superset of 0.13.2's) and Ironic, a BMO
// v0.14.0-rc.0 manager per variant watches a namespace of its own
// (WATCH_NAMESPACE; 0.13.2's watches only its own): a host with
// `inspectionMode: fast` on a two-disk VM is inspected out of band (the VM
// never starts), its HardwareData is checked against the VM's spec (CPUs,
// memory, the NIC's MAC and network, each disk's size and serial), the
// root-device hint written from it selects the intended disk by Ironic's
// own matcher, and it provisions a live ISO and is deleted; hosts whose
// BMC names no System or carries a wrong password show a registration
// error and write nothing. docs/metal3.md is the recipe these steps
// follow. Each step asserts BMO's
// status (provisioning state, operationalStatus, poweredOn,
// errorMessage), the VirtualMachine and its VMI, and `fields --check`; a
// failing host prints its status, its Ironic node and the manager's and
// the conductor's log lines about it.
//
// Without the managers (make bmo), the chroot (make ironic-chroot, as root)
// or BMO's source tree, the test skips, except under CI=true where it
// fails. The package has no non-test code.
package metal3
