// Command redfish-bridge serves DMTF Redfish for KubeVirt VirtualMachines.
// `redfish-bridge --help` lists its commands (commands.go); every command
// takes --help, and --log-format and --log-level choose how it logs
// (log.go). The demo (a local apiserver, simulated VMs and the service) is
// a separate binary, cmd/redfish-bridge-demo, so this one links no test
// harness.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, streams{
		out: os.Stdout, err: os.Stderr, lookupEnv: os.LookupEnv,
		terminal: term.IsTerminal(int(os.Stderr.Fd())),
	})
	stop()
	os.Exit(code)
}
