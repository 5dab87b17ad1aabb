// Package protocols owns the per-System switches of the protocols the
// bridge serves besides Redfish: IPMI (package ipmi) and the SSH serial
// console (package sshconsole). An Administrator switches them with a
// PATCH of the Manager's NetworkProtocol; redfish-protocols records what
// is off in one VM annotation (apply.AnnotationProtocols), so every
// replica reads it from its VM cache and a restarted bridge reads it
// again. The IPMI endpoint closes a switched-off System's port; the
// console Opener refuses a switched-off protocol's console ([Switches]).
//
// [Table] is what the Redfish service shows and switches
// (redfish.Protocols): each protocol's port and whether it is on.
package protocols
