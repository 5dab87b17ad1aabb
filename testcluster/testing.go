package testcluster

import (
	"log/slog"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// ForTest starts a cluster with CRD variant v for the test and stops it in
// t.Cleanup (which also runs when the test fails or panics). Missing
// binaries are a failure, not a skip: `make test` builds them first. When
// the test failed, the end of the kube-apiserver log is logged.
func ForTest(t testing.TB, v crds.Variant) *Cluster {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := Start(t.Context(), Options{Variant: v, Log: log})
	if err != nil { // ErrMissingBinary says to run make tools
		t.Fatal(err)
	}
	t.Logf("test cluster (%s CRDs) ready in %s at %s", v, c.ReadyAfter.Round(1e6), c.Admin.Host)
	t.Cleanup(func() {
		if t.Failed() && c.apiserver != nil {
			t.Logf("kube-apiserver log tail:\n%s", c.apiserver.logTail(40))
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop test cluster: %v", err)
		}
	})
	return c
}
