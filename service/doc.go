// Package service assembles a running bridge from a Kubernetes client
// configuration: list-mode detection, informer caches, the SSA writer, the
// media and power services and their watch-driven reconcilers, accounts and
// sessions backed by Kubernetes objects, and the Redfish HTTP(S) server.
// `redfish-bridge serve` and `redfish-bridge-demo` both run it.
package service
