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
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/sshconsole"
)

// Sample VMs are shared by the tests of one variant's env; each test uses
// its own so the tests stay independent of their order.
const (
	numVMs        = 17
	vmSushyFirst  = 0 // vm-0..vm-5: sushy (3 session, 3 basic)
	vmRedfishtool = 6
	vmGofish      = 7
	vmBadInput    = 8
	vmSushy39     = 9 // vm-9..vm-11: the Ironic 38/39 sequence through sushy 5.8
	vmConformance = 12
	vmAnsible     = 13
	vmIPMI        = 14
	vmWebUI       = 15 // the web pages' browser test (webui_test.go)
	vmSSH         = 16 // the SSH console through OpenSSH (sshconsole_test.go)
)

// envs holds one running demo per CRD variant, started on first use and
// stopped by TestMain.
var envs = struct {
	mu   sync.Mutex
	m    map[crds.Variant]*demo.Env
	errs map[crds.Variant]error
	// ipmiPorts is each env's IPMI port (its range of one port).
	ipmiPorts map[crds.Variant]int
}{m: map[crds.Variant]*demo.Env{}, errs: map[crds.Variant]error{}, ipmiPorts: map[crds.Variant]int{}}

func TestMain(m *testing.M) {
	code := m.Run()
	envs.mu.Lock()
	for v, e := range envs.m {
		if err := e.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop %s env: %v\n", v, err)
		}
	}
	envs.mu.Unlock()
	removeSushy513Dir()
	os.Exit(code)
}

// envFor returns the running demo for variant v. The first call starts the
// demos of every variant at once (every test runs on all of them).
func envFor(t *testing.T, v crds.Variant) *demo.Env {
	t.Helper()
	envs.mu.Lock()
	defer envs.mu.Unlock()
	if _, tried := envs.errs[v]; !tried {
		if _, ok := envs.m[v]; !ok {
			startAll(t)
		}
	}
	if err := envs.errs[v]; err != nil {
		t.Fatalf("start demo env (%s): %v", v, err)
	}
	return envs.m[v]
}

// startAll starts a demo per variant concurrently; envs.mu is held.
func startAll(t *testing.T) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	log := slog.New(newCaptureHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	for _, v := range crds.Variants {
		port, err := testutil.FreeUDPPort()
		if err != nil {
			envs.errs[v] = err
			continue
		}
		envs.ipmiPorts[v] = port
		wg.Go(func() {
			start := time.Now()
			// The env outlives the test that starts it: not t.Context().
			e, err := demo.Start(context.Background(), demo.Options{
				Variant: v, VMs: numVMs, Listen: "127.0.0.1:0",
				StartDelay: 200 * time.Millisecond, StopDelay: 200 * time.Millisecond,
				ImageSize: 4 << 20, Log: log, VirtAPI: true,
				IPMI:       ipmi.Config{Address: "127.0.0.1", FirstPort: port, LastPort: port},
				SSHConsole: sshconsole.Config{Listen: "127.0.0.1:0"},
			})
			mu.Lock()
			defer mu.Unlock()
			envs.errs[v] = err
			if err == nil {
				envs.m[v] = e
				t.Logf("TIMING demo env (%s CRDs) ready in %s at %s", v, time.Since(start).Round(time.Millisecond), e.URL)
			}
		})
	}
	wg.Wait()
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
