// Package system holds the Redfish-side vocabulary the other packages
// share (package kubevirt holds the KubeVirt side): the key and Redfish id
// of a system (one KubeVirt VirtualMachine); the Redfish enums the bridge
// accepts (power states, reset types, boot targets and modes, Secure Boot);
// health and boot progress; the virtual-media slots and their kinds (CD or
// USB stick); and the per-concern state the bridge records on the VM (a
// slot's insert, import phase and TLS trust, the boot override, the
// deferred power-on, the protocols an Administrator switched off).
//
// Of Kubernetes it imports only apimachinery's name validation (a system
// id names a namespace and a VM), and it writes nothing: apply/ encodes
// these types into VM annotations, redfish/ into JSON.
package system
