package bench_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/bench"
)

// BenchmarkBridgeRSS measures the RSS of the real redfish-bridge binary,
// a process of its own, with BENCH_RSS_VMS VMs (default 1000, half of them
// running) of CRD variant BENCH_RSS_VARIANT (default maplist): idle after
// the inventory synced, while every System is read once, while 50 VMs get
// a boot override and a power change, and idle again. Run it alone with
// `go test -run '^$' -bench BridgeRSS -benchtime 1x ./bench/`. More:
// BENCH_RSS_RUNNING (VMs running, default half), BENCH_RSS_RATES (time per
// GET measurement; unset: none), BENCH_RSS_CYCLES (VMs given Ironic's
// provisioning cycle; unset: none), BENCH_RSS_STEP_TIMEOUT and
// BENCH_RSS_PHASE_TIMEOUT (bounds of each setup step and measured phase,
// see [bench.RSSScenario]), BENCH_RSS_TIMEOUT (the whole run, default 30m),
// BENCH_RSS_GOMEMLIMIT (the bridge process's GOMEMLIMIT; default unset),
// BENCH_RSS_REPLICAS (bridge processes under leader election, each request
// to a random one; default 1), BENCH_RSS_NAMESPACES (spread the VMs over
// that many namespaces; default 100 VMs per namespace),
// BENCH_RSS_STATUS_BY_BENCH (1: no virt-controller, the bench writes each
// VM's status; no VM runs), BENCH_RSS_BARE_LIST (1: time the apiserver
// listing the same objects to a bare client, the start-up's reference),
// BENCH_RSS_PAGES (time per $top=1000 page measurement; unset: none),
// BENCH_RSS_POWER_POLL (systems power-polled during the cycle phase),
// BENCH_RSS_SUBSCRIPTIONS (event subscriptions of the events phase, then
// the poll phase; unset: neither) and BENCH_RSS_EVENT_STARTS (halted VMs
// the events phase starts out of band; default 100);
// `make bench-10k` and `make bench-100k` set them for 10,000 and 100,000 VMs. Its log
// (Warn) and progress lines go to _out/bench-bridgerss.log, the bridge's to
// _out/bench-bridgerss-bridge.log.
func BenchmarkBridgeRSS(b *testing.B) {
	vms := envInt(b, "BENCH_RSS_VMS", 1000)
	logPath := filepath.Join(outDir(b), "bench-bridgerss.log")
	bridgeLog := filepath.Join(filepath.Dir(logPath), "bench-bridgerss-bridge.log")
	lf, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer lf.Close() // log file
	var running, cycles, replicas, namespaces, powerPoll, subscriptions, eventStarts int
	for name, n := range map[string]*int{"BENCH_RSS_RUNNING": &running, "BENCH_RSS_CYCLES": &cycles, "BENCH_RSS_REPLICAS": &replicas,
		"BENCH_RSS_NAMESPACES": &namespaces, "BENCH_RSS_POWER_POLL": &powerPoll,
		"BENCH_RSS_SUBSCRIPTIONS": &subscriptions, "BENCH_RSS_EVENT_STARTS": &eventStarts} {
		if *n, err = strconv.Atoi(env(name, "0")); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	var rates, pages time.Duration
	for name, d := range map[string]*time.Duration{"BENCH_RSS_RATES": &rates, "BENCH_RSS_PAGES": &pages} {
		if *d, err = time.ParseDuration(env(name, "0s")); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	var timeout, stepTimeout, phaseTimeout time.Duration
	for name, d := range map[string]*time.Duration{"BENCH_RSS_TIMEOUT": &timeout, "BENCH_RSS_STEP_TIMEOUT": &stepTimeout, "BENCH_RSS_PHASE_TIMEOUT": &phaseTimeout} {
		if *d, err = time.ParseDuration(env(name, "0s")); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	sc := bench.RSSScenario{
		Variant: crds.Variant(env("BENCH_RSS_VARIANT", string(crds.MapList))), VMs: vms,
		Running: running, Cycles: cycles, Rates: rates, StepTimeout: stepTimeout, PhaseTimeout: phaseTimeout,
		Log:        slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelWarn})),
		GoMemLimit: os.Getenv("BENCH_RSS_GOMEMLIMIT"),
		BridgeLog:  bridgeLog, Progress: io.MultiWriter(os.Stdout, lf),
		Replicas: replicas, Namespaces: namespaces, PowerPoll: powerPoll, Pages: pages,
		Subscriptions: subscriptions, EventStarts: eventStarts,
		StatusByBench: env("BENCH_RSS_STATUS_BY_BENCH", "") == "1", BareList: env("BENCH_RSS_BARE_LIST", "") == "1",
	}
	var res *bench.RSSResult
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
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
