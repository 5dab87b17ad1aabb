package bench_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/bench"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/testcluster"
)

// BenchmarkBridgeRSS measures the RSS of the real redfish-bridge binary,
// a process of its own, with BENCH_RSS_VMS VMs (default 1000, half of them
// running) of CRD variant BENCH_RSS_VARIANT (default maplist): idle after
// the inventory synced, while every System is read once, while 50 VMs get
// a boot override and a power change, and idle again. Run it alone with
// `go test -run '^$' -bench BridgeRSS -benchtime 1x ./bench/`; its log
// (Warn) goes to _out/bench-bridgerss.log, the bridge's to
// _out/bench-bridgerss-bridge.log.
func BenchmarkBridgeRSS(b *testing.B) {
	vms, err := strconv.Atoi(env("BENCH_RSS_VMS", "1000"))
	if err != nil {
		b.Fatalf("BENCH_RSS_VMS: %v", err)
	}
	root, err := testcluster.ModuleRoot()
	if err != nil {
		b.Fatal(err)
	}
	logPath := filepath.Join(root, "_out", "bench-bridgerss.log")
	bridgeLog := filepath.Join(root, "_out", "bench-bridgerss-bridge.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		b.Fatal(err)
	}
	lf, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer lf.Close() //nolint:errcheck // log file
	sc := bench.RSSScenario{
		Variant: crds.Variant(env("BENCH_RSS_VARIANT", string(crds.MapList))), VMs: vms,
		Log:       slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelWarn})),
		BridgeLog: bridgeLog,
	}
	var res *bench.RSSResult
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		res, err = bench.BridgeRSS(ctx, sc)
		cancel()
	}
	if res != nil {
		res.Print(os.Stdout)
		rss, heap := res.Peak()
		b.ReportMetric(float64(rss)/(1<<20), "bridge-RSS-MB")
		b.ReportMetric(float64(res.Phase("idle").RSSEnd)/(1<<20), "bridge-idle-RSS-MB")
		b.ReportMetric(float64(heap)/(1<<20), "bridge-heap-MB")
	}
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("logs: %s, %s (the bridge's)\n", logPath, bridgeLog)
}
