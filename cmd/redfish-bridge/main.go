// Command redfish-bridge serves DMTF Redfish for KubeVirt VirtualMachines.
//
//	redfish-bridge serve   the Redfish service against a cluster
//	redfish-bridge import  the ISO importer (entrypoint of import pods)
//	redfish-bridge fields  who owns what on a VM, checked against the
//	                       ownership table (also the kubectl plugin
//	                       kubectl-redfish_fields: symlink it on $PATH)
//
// The demo (a local apiserver, simulated VMs and the service) is a separate
// binary, cmd/redfish-bridge-demo, so this one links no test harness.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"k8s.io/klog/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if v := os.Getenv("REDFISH_BRIDGE_LOG_LEVEL"); v != "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(v)); err != nil {
			fmt.Fprintf(os.Stderr, "redfish-bridge: REDFISH_BRIDGE_LOG_LEVEL: %v\n", err)
			os.Exit(2)
		}
		opts.Level = level
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, opts))
	if os.Getenv("REDFISH_BRIDGE_LOG") == "text" {
		log = slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	slog.SetDefault(log)
	klog.SetSlogLogger(log.With("source", "client-go"))
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == pluginName {
		args = append([]string{"fields"}, args...)
	}
	if err := run(ctx, args); err != nil {
		log.Error("redfish-bridge failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: redfish-bridge serve|import|fields [flags]")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:])
	case "import":
		return runImport(ctx, args[1:])
	case "fields":
		return runFields(ctx, args[1:])
	default:
		return fmt.Errorf("unknown subcommand %q: want serve, import or fields", args[0])
	}
}
