// Package ironic is the end-to-end test with a real OpenStack Ironic:
// Debian 12's Ironic 21.4 (internal/ironicproc) runs as one all-in-one
// process and drives the bridge of a demo per CRD variant (stock and
// maplist) through its REST API, the way an operator does: enroll and
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
// its own node and VM, all of them at once on one conductor. Each step
// asserts Ironic's states and errors and the VirtualMachine, its VMI and
// `fields --check`; a failing node prints Ironic's last_error, its
// conductor log lines and the bridge's requests and responses for it.
//
// Without python3-ironic the test skips, except under CI=true where it
// fails. The package has no non-test code.
package ironic
