// Command redfish-bridge-demo runs the product on its embedded default, for
// `make demo`: a local etcd + kube-apiserver with the KubeVirt CRDs,
// KubeVirt's own virt-controller (bin/virt-controller, built by `make
// tools`), the simulated node (package sim), sample VirtualMachines and the
// Redfish service on https://127.0.0.1:8443, until Ctrl-C. It links the
// test harness (sim, testcluster), which is why it is not the image's
// binary.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if os.Getenv("REDFISH_BRIDGE_LOG_FORMAT") == "text" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	slog.SetDefault(log)
	klog.SetSlogLogger(log.With("source", "client-go"))
	if err := runDemo(ctx, os.Args[1:]); err != nil {
		log.Error("redfish-bridge-demo failed", "err", err)
		os.Exit(1)
	}
}
