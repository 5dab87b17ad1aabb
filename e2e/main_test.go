package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/demo"
)

// Sample VMs are shared by the tests of one variant's env; each test uses
// its own so the tests stay independent of their order.
const (
	numVMs        = 10
	vmSushyFirst  = 0 // vm-0..vm-5: sushy (3 session, 3 basic)
	vmRedfishtool = 6
	vmGofish      = 7
	vmBadInput    = 8
)

// envs holds one running demo per CRD variant, started on first use and
// stopped by TestMain.
var envs = struct {
	mu   sync.Mutex
	m    map[crds.Variant]*demo.Env
	errs map[crds.Variant]error
}{m: map[crds.Variant]*demo.Env{}, errs: map[crds.Variant]error{}}

func TestMain(m *testing.M) {
	code := m.Run()
	envs.mu.Lock()
	for v, e := range envs.m {
		if err := e.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop %s env: %v\n", v, err)
		}
	}
	envs.mu.Unlock()
	os.Exit(code)
}

// envFor returns the running demo for variant v, starting it on first use.
func envFor(t *testing.T, v crds.Variant) *demo.Env {
	t.Helper()
	envs.mu.Lock()
	defer envs.mu.Unlock()
	if e, ok := envs.m[v]; ok {
		return e
	}
	if err, ok := envs.errs[v]; ok {
		t.Fatalf("demo env (%s) failed to start earlier: %v", v, err)
	}
	start := time.Now()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The env outlives the test that starts it: not t.Context().
	e, err := demo.Start(context.Background(), demo.Options{
		Variant: v, VMs: numVMs, Listen: "127.0.0.1:0",
		StartDelay: 200 * time.Millisecond, StopDelay: 200 * time.Millisecond,
		ImageSize: 4 << 20, Log: log,
	})
	if err != nil {
		envs.errs[v] = err
		t.Fatalf("start demo env (%s): %v", v, err)
	}
	envs.m[v] = e
	t.Logf("demo env (%s CRDs) ready in %s at %s", v, time.Since(start).Round(time.Millisecond), e.URL)
	return e
}

// forEachVariant runs f as a subtest per CRD variant, logging its duration.
func forEachVariant(t *testing.T, f func(t *testing.T, env *demo.Env)) {
	t.Helper()
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			env := envFor(t, v)
			start := time.Now()
			f(t, env)
			t.Logf("TIMING %s: %s", t.Name(), time.Since(start).Round(time.Millisecond))
		})
	}
}
