// Package ipmi is the bridge's IPMI v2.0 RMCP+ ("lanplus") endpoint: what
// Debian's ipmitool, Ironic's ipmi hardware type and metal3's ipmi://
// addresses speak to a BMC, served over UDP for one System per port.
//
// The package owns the wire format (rmcp.go: RMCP and the ASF presence
// ping; packet.go: the IPMI v1.5 and v2.0 session wrappers; message.go: the
// IPMI LAN message with its checksums), the cipher suites (cipher.go:
// suites 3 and 17, nothing else), the session establishment (rakp.go: Open
// Session and RAKP 1-4 against the bridge's users), the sessions
// (session.go: sequence-number windows, timeouts, Close Session, the bound
// on sessions per client address) and the commands (app.go, chassis.go,
// bootoptions.go, and Serial-over-LAN: sol.go the payload and SOL
// configuration commands, solpayload.go the SOL packets). Every other
// command answers "invalid command" (0xC1).
//
// Serial-over-LAN relays the System's console stream through [Consoles]
// (console.Opener, shared with the SSH console: one stream per VM, the
// same per-user limits, ReadOnly rule and audit lines). The guest's output
// goes one SOL packet at a time, resent until acknowledged, the stream not
// read meanwhile (backpressure, one packet held); a resent client packet
// is acknowledged again and written once; the session's end ends the
// stream.
//
// What it refuses, the classic IPMI holes: IPMI v1.5 sessions (Get Session
// Challenge and Activate Session answer 0xCC), cipher suite 0 and any
// suite without integrity and confidentiality (Open Session answers
// "invalid authentication algorithm" or "no cipher suite match"), null
// user names and users without an IPMI password (RAKP 2 answers
// "unauthorized name"), unauthenticated or replayed packets inside a
// session (dropped, as the specification says), and more than
// [MaxSessionsPerAddress] sessions from one client address (Open Session
// answers "insufficient resources").
//
// Power and boot go through [Backend], whose implementation calls the
// same verbs the Redfish backend calls (power.Service: the same
// server-side applies under redfish-power and redfish-boot, the same
// preconditions and the same power-on deferral while an image imports).
package ipmi
