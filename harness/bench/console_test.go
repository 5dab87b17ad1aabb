package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/bench"
)

// BenchmarkConsole measures the serial console through the bridge binary
// (bench.Console). Settings:
//
//	BENCH_CONSOLE_VMS  consoles open at once for the memory figure (default 50)
//	BENCH_CONSOLE_MIB  MiB echoed through one console over SSH (default 4)
//	BENCH_CONSOLE_SOL_KIB  KiB echoed through one over IPMI SOL (default 256)
func BenchmarkConsole(b *testing.B) {
	vms := envInt(b, "BENCH_CONSOLE_VMS", 50)
	mib := envInt(b, "BENCH_CONSOLE_MIB", 4)
	solKiB := envInt(b, "BENCH_CONSOLE_SOL_KIB", 256)
	dir := outDir(b)
	log := warnLog(b, filepath.Join(dir, "bench-console.log"))
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		res, err := bench.Console(ctx, bench.ConsoleScenario{
			VMs: vms, Bytes: mib << 20, SOLBytes: solKiB << 10, BridgeLog: filepath.Join(dir, "bench-console-bridge.log"),
			Log: log,
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
