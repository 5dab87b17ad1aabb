// Package ironic is the end-to-end test with a real OpenStack Ironic:
// Debian 12's Ironic 21.4 (internal/ironicproc) runs as one all-in-one
// process and drives the bridge of a demo per CRD variant (stock and
// maplist) through its REST API, the way an operator does: enroll and
// manage, power, boot devices, boot mode and Secure Boot, NMI, out-of-band
// inspection, a virtual-media deploy waiting for an agent, cleaning then
// abort, a ramdisk deploy with rebuild and undeploy. Every scenario runs on
// its own node and VM, all of them at once on one conductor. Each step
// asserts Ironic's states and errors and the VirtualMachine, its VMI and
// `fields --check`; a failing node prints Ironic's last_error, its
// conductor log lines and the bridge's requests and responses for it.
//
// Without python3-ironic the test skips, except under CI=true where it
// fails. The package has no non-test code.
package ironic
