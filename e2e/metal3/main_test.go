package metal3

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
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// liveISO is the file the conductor's http_root serves as the hosts'
// live-iso image (its contents do not matter: the simulated KubeVirt
// never boots it).
const liveISO = "live.iso"

// bmoSource is the baremetal-operator tree in ../shared/third_party whose
// CRDs the clusters get (hack/bmo.sh builds the manager from it).
var bmoSource = []string{"third_party", "baremetal-operator-0.13.2"}

// suite is what the hosts share: Ironic 39, and per CRD variant a demo
// (cluster, simulator, bridge) with BMO's CRDs and a baremetal-operator
// manager of its own. Both managers share the Ironic; their hosts have
// names of their own.
type suite struct {
	ironic *ironicproc.Ironic
	api    *ironicproc.Client
	envs   map[crds.Variant]*demo.Env
	bmos   map[crds.Variant]*bmo
}

var shared = struct {
	once    sync.Once
	s       *suite
	missing string
	stop    func() error
	err     error
}{}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.stop != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop the metal3 suite: %v\n", err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// suiteFor returns the suite, starting it on first use; a prerequisite
// that is missing here (the Ironic 39 chroot, the manager, BMO's source)
// skips the test, or fails it under CI=true.
func suiteFor(t *testing.T) *suite {
	t.Helper()
	crdGlob := filepath.Join(testutil.SharedDir(t, bmoSource...), "config", "base", "crds", "bases", "*.yaml")
	shared.once.Do(func() {
		root, err := ironicproc.ChrootPath(t.Context(), testutil.ModuleRoot(t))
		if err != nil {
			shared.err = err
			return
		}
		release := ironicproc.Chroot(root)
		if err := release.Available(t.Context()); err != nil {
			shared.missing = err.Error()
			return
		}
		manager, err := managerPath(t.Context())
		if err != nil {
			shared.err = err
			return
		}
		if _, err := os.Stat(manager); err != nil {
			shared.missing = fmt.Sprintf("no baremetal-operator manager (make bmo): %v", err)
			return
		}
		start := time.Now()
		shared.s, shared.stop, shared.err = startSuite(release, manager, crdGlob)
		if shared.err == nil {
			t.Logf("TIMING metal3 suite (Ironic 39, a demo and a baremetal-operator per variant) ready in %s", time.Since(start).Round(time.Millisecond))
		}
	})
	if shared.missing != "" {
		testutil.Missing(t, "metal3 e2e cannot run: %s", shared.missing)
	}
	if shared.err != nil {
		t.Fatalf("start the metal3 suite: %v", shared.err)
	}
	return shared.s
}

// startSuite starts Ironic and the demos at once, then BMO's CRDs and a
// manager per demo. They outlive the test that starts them (TestMain
// calls stop): not t.Context().
func startSuite(release ironicproc.Release, manager, crdGlob string) (*suite, func() error, error) {
	dir, err := os.MkdirTemp("", "redfish-bridge-metal3-")
	if err != nil {
		return nil, nil, fmt.Errorf("temp dir: %w", err)
	}
	s := &suite{envs: map[crds.Variant]*demo.Env{}, bmos: map[crds.Variant]*bmo{}}
	stop := func() error { return s.stopAll(dir) }
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	wg.Go(func() {
		ir, err := ironicproc.Start(ctx, ironicproc.Options{
			Dir: filepath.Join(dir, "ironic"), Release: release,
			SyncPowerInterval: 5 * time.Second, CheckProvisionInterval: 5 * time.Second,
			DefaultBIOSInterface: "redfish", // HostFirmwareSettings: BMO names no bios interface
		})
		mu.Lock()
		defer mu.Unlock()
		s.ironic = ir
		if err != nil {
			err = fmt.Errorf("Ironic %s: %w", release.Name, err)
		}
		errs = append(errs, err)
	})
	for _, v := range crds.Variants {
		wg.Go(func() {
			env, err := demo.Start(ctx, demo.Options{
				Variant: v, VMs: 1, Listen: "127.0.0.1:0",
				StartDelay: 200 * time.Millisecond, ImageSize: 1 << 20, Log: log,
			})
			if err == nil {
				err = env.Cluster.InstallCRDFiles(ctx, crdGlob)
			}
			if err == nil {
				err = env.Cluster.CreateNamespace(ctx, hostNamespace)
			}
			mu.Lock()
			defer mu.Unlock()
			if env != nil {
				s.envs[v] = env
			}
			if err != nil {
				err = fmt.Errorf("%s demo: %w", v, err)
			}
			errs = append(errs, err)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	s.api = ironicproc.NewClient(s.ironic.URL)
	s.api.Version = release.APIVersion
	for seed, name := range []string{liveISO, dataISO} {
		data := make([]byte, 1<<20)
		r := rand.New(rand.NewPCG(1, 7+uint64(seed)))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		if err := os.WriteFile(filepath.Join(s.ironic.HTTPRoot, name), data, 0o644); err != nil { // served to the simulator
			return nil, nil, errors.Join(fmt.Errorf("write %s: %w", name, err), stop())
		}
	}
	for _, v := range crds.Variants {
		b, err := startBMO(manager, filepath.Join(dir, "bmo-"+string(v)), s.envs[v].Cluster.Kubeconfig, s.ironic.URL)
		if err != nil {
			return nil, nil, errors.Join(err, stop())
		}
		s.bmos[v] = b
	}
	return s, stop, nil
}

// imageURL is where the conductor's HTTP server offers name.
func (s *suite) imageURL(name string) string { return s.ironic.HTTPURL + "/" + name }

// stopAll stops the managers, then the demos and Ironic, and removes dir.
func (s *suite) stopAll(dir string) error {
	var errs []error
	for v, b := range s.bmos {
		if err := b.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop %s baremetal-operator: %w", v, err))
		}
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
			err := s.ironic.Stop()
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}
