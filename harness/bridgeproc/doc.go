// Package bridgeproc runs the real `redfish-bridge serve` binary as a child
// process against a test cluster, for the tests and benchmarks that need
// the bridge in a process of its own (killed mid-import by reliability,
// measured from outside by bench): [Build] compiles cmd/redfish-bridge,
// [Start] runs it serving plain HTTP, [Proc.WaitServing] waits until it
// answers, [Proc.Kill] ends it with SIGKILL.
package bridgeproc
