// Package system holds the vocabulary every other package shares: the key
// and Redfish id of a system (one KubeVirt VirtualMachine), the Redfish enums
// the bridge accepts (reset types, boot targets, boot modes, power states)
// and the per-concern state the bridge records on the VM (virtual-media
// slots, boot override, deferred power-on).
//
// It imports nothing from Kubernetes and writes nothing: apply/ encodes
// these types into VM annotations, redfish/ into JSON.
package system
