package ironic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/demo"
	"github.com/redfish-bridge/redfish-bridge/internal/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/internal/testutil"
)

// ISO files the conductor's http_root serves (the contents do not matter:
// the simulated KubeVirt never boots them).
const (
	deployISO = "deploy.iso" // the agent ramdisk of the custom-agent deploy and of cleaning
	bootISO   = "boot.iso"   // the instance of the ramdisk deploy
)

// syncInterval is the conductor's power-state sync period.
const syncInterval = 3 * time.Second

// suite is what every scenario shares: a demo (cluster, simulator, bridge)
// per CRD variant, each behind a recording proxy, and one Ironic.
type suite struct {
	ironic *ironicproc.Ironic
	api    *ironicproc.Client
	envs   map[crds.Variant]*demo.Env
	recs   map[crds.Variant]*recorder
	forces map[crds.Variant]*forceCounter
	dir    string
}

var shared = struct {
	once sync.Once
	s    *suite
	err  error
	skip string
}{}

func TestMain(m *testing.M) {
	code := m.Run()
	if s := shared.s; s != nil {
		start := time.Now()
		err := s.stop()
		fmt.Fprintf(os.Stderr, "TIMING ironic suite stopped in %s\n", time.Since(start).Round(time.Millisecond))
		if err != nil {
			fmt.Fprintf(os.Stderr, "stop the ironic suite: %v\n", err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// suiteFor returns the running suite, starting it on first use. Without
// python3-ironic it skips the test, or fails it under CI=true.
func suiteFor(t *testing.T) *suite {
	t.Helper()
	shared.once.Do(func() {
		if err := ironicproc.Available(t.Context()); err != nil {
			shared.skip = err.Error()
			return
		}
		start := time.Now()
		shared.s, shared.err = startSuite()
		if shared.err == nil {
			t.Logf("TIMING ironic suite (Ironic 21.4 + demo per variant) ready in %s", time.Since(start).Round(time.Millisecond))
		}
	})
	if shared.skip != "" {
		testutil.Missing(t, "Ironic cannot run: %s", shared.skip)
	}
	if shared.err != nil {
		t.Fatalf("start the ironic suite: %v", shared.err)
	}
	return shared.s
}

// startSuite starts Ironic and the demos concurrently. They outlive the
// test that starts them (TestMain stops them): not t.Context().
func startSuite() (*suite, error) {
	dir, err := os.MkdirTemp("", "redfish-bridge-ironic-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	s := &suite{envs: map[crds.Variant]*demo.Env{}, recs: map[crds.Variant]*recorder{}, forces: map[crds.Variant]*forceCounter{}, dir: dir}
	for _, v := range crds.Variants {
		s.forces[v] = newForceCounter()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	wg.Go(func() {
		ir, err := ironicproc.Start(ctx, ironicproc.Options{
			Dir:                    filepath.Join(dir, "ironic"),
			SyncPowerInterval:      syncInterval,
			CheckProvisionInterval: 3 * time.Second,
			CallbackTimeout:        callbackTimeout,
		})
		mu.Lock()
		defer mu.Unlock()
		s.ironic = ir
		errs = append(errs, err)
	})
	for _, v := range crds.Variants {
		wg.Go(func() {
			env, err := demo.Start(ctx, demo.Options{
				Variant: v, VMs: numVMs, Listen: "127.0.0.1:0",
				StartDelay: 200 * time.Millisecond, StopDelay: stopDelay,
				VirtAPI: true, GracePeriodSeconds: gracePeriod, WrapKube: s.forces[v].wrap,
				ImageSize: 1 << 20, Log: log,
			})
			var rec *recorder
			if err == nil {
				rec, err = startRecorder(env.URL)
			}
			mu.Lock()
			defer mu.Unlock()
			if env != nil {
				s.envs[v] = env
			}
			if rec != nil {
				s.recs[v] = rec
			}
			errs = append(errs, err)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	s.api = ironicproc.NewClient(s.ironic.URL)
	for i, name := range []string{deployISO, bootISO} {
		data := make([]byte, 1<<20)
		r := rand.New(rand.NewPCG(uint64(i+1), 7))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		if err := os.WriteFile(filepath.Join(s.ironic.HTTPRoot, name), data, 0o644); err != nil { //nolint:gosec // served to the simulator
			return nil, errors.Join(fmt.Errorf("write %s: %w", name, err), s.stop())
		}
	}
	return s, nil
}

// imageURL is where the conductor's HTTP server offers name.
func (s *suite) imageURL(name string) string { return s.ironic.HTTPURL + "/" + name }

func (s *suite) stop() error {
	var errs []error
	for _, r := range s.recs {
		r.Close()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for v, e := range s.envs {
		wg.Go(func() {
			if err := e.Stop(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("stop %s demo: %w", v, err))
				mu.Unlock()
			}
		})
	}
	if s.ironic != nil {
		wg.Go(func() {
			start := time.Now()
			err := s.ironic.Stop()
			fmt.Fprintf(os.Stderr, "TIMING ironic stopped in %s\n", time.Since(start).Round(time.Millisecond))
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.RemoveAll(s.dir)
}

// conductorLog is Ironic's log lines naming uuid (the last n).
func (s *suite) conductorLog(uuid string, n int) string { return s.ironic.LogTail(n, uuid) }
