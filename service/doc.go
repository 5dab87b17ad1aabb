// Package service assembles a running bridge from a Kubernetes client
// configuration and runs it on the manager (package manager): the probes
// server, the caches (list mode, inventory, trust cache, accounts and
// sessions backed by Kubernetes objects), the SSA writer, the media and
// power services (concerns.go) and their watch-driven reconcilers under
// the Lease (leader.go), and the Redfish HTTP(S) server (servers.go).
// A long-running part of another package is one line in parts.go.
// `redfish-bridge serve` and `redfish-bridge-demo` both run it.
package service
