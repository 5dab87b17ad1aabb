package bench_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/bench"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// Settings come from the environment (make bench passes them through):
//
//	BENCH_VMS       VM counts, comma-separated (default "100,1000")
//	BENCH_CLIENTS   concurrent Redfish clients (default 50)
//	BENCH_VARIANTS  CRD variants (default "maplist,stock")
//	BENCH_CLOSE     1: Connection: close on every request, as sushy does
//	BENCH_BUDGET    skip scenarios that would start after this (default 25m)
//	BENCH_LOAD_TIMEOUT bound of one load phase (default 12m)
//	BENCH_OUT       CSV path (default <module>/_out/bench.csv)
func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// envInt is the whole number of setting name (def when unset).
func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	n, err := strconv.Atoi(env(name, strconv.Itoa(def)))
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}

// warnLog is a logger of warnings into the file at path, closed when b
// ends.
func warnLog(b *testing.B, path string) *slog.Logger {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// BenchmarkBridge runs every scenario once (use -benchtime 1x), prints the
// table and writes the CSV.
func BenchmarkBridge(b *testing.B) {
	clients := envInt(b, "BENCH_CLIENTS", 50)
	budget, err := time.ParseDuration(env("BENCH_BUDGET", "25m"))
	if err != nil {
		b.Fatalf("BENCH_BUDGET: %v", err)
	}
	var counts []int
	for _, s := range strings.Split(env("BENCH_VMS", "100,1000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			b.Fatalf("BENCH_VMS: %v", err)
		}
		counts = append(counts, n)
	}
	root, err := testcluster.ModuleRoot()
	if err != nil {
		b.Fatal(err)
	}
	out := env("BENCH_OUT", filepath.Join(root, "_out", "bench.csv"))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	var results []*bench.Result
	for b.Loop() {
		for _, v := range strings.Split(env("BENCH_VARIANTS", "maplist,stock"), ",") {
			for _, n := range counts {
				name := fmt.Sprintf("%s-%dvms", v, n)
				if time.Since(began) > budget {
					fmt.Printf("\n=== %s skipped: time budget %s used up ===\n", name, budget)
					continue
				}
				res, err := runOne(b, crds.Variant(strings.TrimSpace(v)), n, clients, filepath.Join(filepath.Dir(out), "bench-"+name+".log"))
				if res != nil {
					res.Print(os.Stdout)
					results = append(results, res)
				}
				if err != nil {
					b.Errorf("%s: %v", name, err)
				}
			}
		}
	}
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close() // closed below
	if err := bench.WriteCSV(f, results); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("\nCSV: %s\n", out)
}

func runOne(b *testing.B, v crds.Variant, vms, clients int, logPath string) (*bench.Result, error) {
	b.Helper()
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	defer lf.Close() // log file
	log := slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	loadTimeout, err := time.ParseDuration(env("BENCH_LOAD_TIMEOUT", "12m"))
	if err != nil {
		return nil, fmt.Errorf("BENCH_LOAD_TIMEOUT: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout+10*time.Minute)
	defer cancel()
	return bench.Run(ctx, bench.Scenario{
		Variant: v, VMs: vms, Clients: clients, Close: env("BENCH_CLOSE", "") == "1",
		Timeout: loadTimeout, Log: log,
	})
}
