package testcluster

import (
	"log/slog"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// ForTest starts a cluster with CRD variant v for the test and stops it in
// t.Cleanup (which also runs when the test fails or panics). Missing
// binaries are a failure, not a skip: `make test` builds them first. When
// the test failed, what the cluster's processes logged while it ran is
// logged, unless the test or a subtest logged its tails through
// [Cluster.LogsOnFailure].
func ForTest(t testing.TB, v crds.Variant) *Cluster {
	t.Helper()
	return ForTestWith(t, Options{Variant: v})
}

// ForTestWith is [ForTest] with options (Log defaults to the test's
// output at level Warn).
func ForTestWith(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	c, err := Start(t.Context(), opts)
	if err != nil { // ErrMissingBinary says to run make tools
		t.Fatal(err)
	}
	t.Logf("test cluster (%s CRDs, virt-controller %t, virt-api %t) ready in %s at %s", c.Variant, c.virtController, c.virtAPI, c.ReadyAfter.Round(1e6), c.Admin.Host)
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop test cluster: %v", err)
		}
	})
	c.fallbackLogsOnFailure(t, nil) // its cleanup runs first, while the logs exist
	return c
}
