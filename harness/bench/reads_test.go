package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/bench"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// BenchmarkReads measures GET System and the Systems collection against
// the floor server, with no other load. Settings:
//
//	BENCH_READS_VMS    VMs (default 1000)
//	BENCH_READS_EACH   time per row and server (default 6s)
//	BENCH_PROFILE      file for a CPU profile of the first bridge run
func BenchmarkReads(b *testing.B) {
	vms := envInt(b, "BENCH_READS_VMS", 1000)
	each, err := time.ParseDuration(env("BENCH_READS_EACH", "6s"))
	if err != nil {
		b.Fatalf("BENCH_READS_EACH: %v", err)
	}
	dir := outDir(b)
	log := warnLog(b, filepath.Join(dir, "bench-reads.log"))
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		res, err := bench.ReadRatios(ctx, bench.ReadScenario{
			Variant: crds.MapList, VMs: vms, Log: log,
			Ratio: bench.RatioOptions{Each: each, Profile: os.Getenv("BENCH_PROFILE")},
		})
		cancel()
		if res != nil {
			res.Print(os.Stdout)
		}
		if err != nil {
			b.Error(err)
		}
	}
}

// outDir is <module>/_out, created.
func outDir(b *testing.B) string {
	b.Helper()
	root, err := testcluster.ModuleRoot()
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, "_out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}
