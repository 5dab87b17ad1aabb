package sim

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// RunForTest builds a simulator on cfg (the node side's client
// configuration, [New]) and runs it until the test ends; a Run that ends
// in an error fails the test. An empty opts.DataDir is a directory of the
// test's; a nil opts.Log logs warnings to the test's output.
func RunForTest(t testing.TB, cfg *rest.Config, opts Options) *Simulator {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	s, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("simulator: %v", err)
		}
	})
	return s
}

// VMIRunning waits until the VMI name in namespace ns is in phase Running
// (failing the test after a guard of two minutes).
func VMIRunning(t testing.TB, dyn dynamic.Interface, ns, name string) {
	t.Helper()
	testutil.Eventually(t, "VMI "+name+" running", 2*time.Minute, 20*time.Millisecond, func(ctx context.Context) error {
		vmi, err := dyn.Resource(VMIResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(vmi.Object, "status", "phase"); phase != "Running" {
			return fmt.Errorf("phase %q", phase)
		}
		return nil
	})
}
