// Package ironic is the end-to-end test with a real OpenStack Ironic, two
// of them side by side: Debian 12's Ironic 21.4 and Debian unstable's
// Ironic 39 (the chroot of hack/ironic-chroot.sh), each run by
// harness/ironicproc as one all-in-one process, drive the bridge of a
// demo per CRD variant (stock and maplist) through their REST API, each on
// VMs of its own, the way an operator does: enroll and
// manage, power, boot devices, boot mode and Secure Boot, NMI, out-of-band
// inspection, a virtual-media deploy waiting for an agent (also with an
// ISO whose import outlasts Ironic's power wait), cleaning then abort, a ramdisk deploy with rebuild and undeploy. The demos run
// KubeVirt's virt-api (demo.Options.VirtAPI) and their guests stop only
// when forced: a 3600 s grace period and a simulator StopDelay of 10 min,
// so Ironic's ForceOff (its power-off, and the first half of its reboot)
// fails the flow on Ironic's 30 s power_state_change_timeout unless the
// bridge forces it through virt-api's stop subresource; the power scenario
// also counts those stops. REDFISH_BRIDGE_IRONIC_UNFORCED=1 hides virt-api's
// subresource API from the bridge (the manual negative control: the test
// then fails). Every scenario runs on
// its own node and VM, up to four at once per conductor (the power
// scenario also manages an idle node whose power-sync reads are its clock
// while its node is in maintenance). What Ironic 39
// does differently is checked on 39: virtual media through the System
// only, read before the first insert (eject-all first), InsertMedia with
// TransferProtocolType, each insert read back before the node is powered
// (`[redfish] enable_vmedia_insert_polling`, on for 39 as its operators
// run it; 21.4 has no such option), and a deploy whose agent ISO download
// breaks off half way (the slot reads Inserted false with the reason, the
// CD never boots, the deploy fails and undeploy leaves no pod or PVC); a power on right after a soft power off retried
// by Ironic on the bridge's 409 ActionParameterValueConflict;
// node.health from the System's Status.Health (API 1.109); the hook-based
// inspection's inventory (CPUs, memory, the NIC's MAC, the disk) where
// properties.cpus stays unset; and a ramdisk deploy through its
// redfish-https boot interface (UefiHttp and HttpBootUri; then boot
// device disk, for which sushy 5.13 PATCHes HttpBootUri null, and a
// reboot that boots the disk); its redfish bios
// interface (BIOS settings with the attribute registry, apply_configuration
// and factory_reset in manual cleaning); its redfish firmware interface
// (a firmware update refused with the bridge's reason); its vmedia API
// (attach and detach on an active node, as baremetal-operator calls it
// for a DataImage) changing the CD of the running VM through KubeVirt's
// volume hotplug, without a reboot; and its `ipmi` hardware type, a node
// whose BMC is the bridge's IPMI endpoint of its VM (the demos serve IPMI
// on a range of ports, the admin has an IPMI password): managed, powered
// on and off and given boot devices through Ironic's ipmitool, each change
// checked in the VM's managed fields (redfish-power, redfish-boot); its
// ipmitool-socat serial console on a redfish node (enabled, the guest's
// prompt and echo read from the TCP port it reports, disabled); and
// its redfish vendor passthru's event subscriptions (create_subscription,
// get_subscription, get_all_subscriptions, delete_subscription), a
// receiver the test runs
// hearing ResourcePoweredOn after Ironic's power-on and ResourcePoweredOff
// after an out-of-band forced stop through virt-api (the demos' bridges
// run with --event-destination-policy deny-loopback,allow=127.0.0.1/32).
// A ramdisk deploy from Ironic 39's http_root served over HTTPS with a
// private CA (Ironic trusts it through webserver_verify_ca, the bridge
// through its CA bundle ConfigMap) reaches active with InsertMedia's
// TransferProtocolType HTTPS; the same deploy from a server whose CA the
// bridge does not trust is refused at the insert (400 with the TLS
// reason), fails at once with the reason in the node's history, and
// leaves no pod or PVC. Each step
// asserts Ironic's states and errors and the VirtualMachine, its VMI and
// `fields --check`; a failing node prints Ironic's last_error, its
// conductor log lines and the bridge's requests and responses for it.
//
// Without python3-ironic, or without the chroot (make ironic-chroot, as
// root), that conductor's subtests skip, except under CI=true where they
// fail. The package has no non-test code.
package ironic
