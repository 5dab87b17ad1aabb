// Package sshconsole is the SSH serial console: an SSH server
// (golang.org/x/crypto/ssh) where a person reaches a VM's serial port with
// OpenSSH's client,
//
//	ssh -t -p <port> <user>@<bridge> <namespace>.<name>
//
// the System chosen in the command by its Redfish id. The user logs in with
// the bridge's own user name and password (the same users Secret, scope
// and login throttle as the Redfish API); the stream is package console's
// (one per VM, limits, idle timeout, audit). "~." at the start of a line
// (after Enter) leaves the console, as OpenSSH's own escape and
// OpenBMC's console do; with -t OpenSSH's client takes "~." itself first,
// which closes the connection too.
//
// [Add] makes it a part of the bridge's manager (Servers group) on
// --ssh-console-listen, with the host key of --ssh-console-host-key.
package sshconsole
