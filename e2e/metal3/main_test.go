package metal3

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// liveISO is the file the conductor's http_root serves as the hosts'
// live-iso image (its contents do not matter: the simulated KubeVirt
// never boots it).
const liveISO = "live.iso"

// bmoSource and bmoFastSource are the baremetal-operator trees in
// ../shared/third_party (hack/bmo.sh builds the managers from them). The
// clusters get 0.14's CRDs when its manager is there (a superset of
// 0.13.2's: inspectionMode, HostClaim, ...), else 0.13.2's.
var (
	bmoSource     = []string{"third_party", "baremetal-operator-0.13.2"}
	bmoFastSource = []string{"third_party", "baremetal-operator-0.14.0-rc.0"}
)

// suite is what the hosts share: Ironic 39, and per CRD variant a demo
// (cluster, simulator, bridge) with BMO's CRDs and a baremetal-operator
// manager of its own. Both managers share the Ironic; their hosts have
// names of their own.
type suite struct {
	release ironicproc.Release
	ironic  *ironicproc.Ironic
	api     *ironicproc.Client
	envs    map[crds.Variant]*demo.Env
	bmos    map[crds.Variant]*bmo
	// fast are the baremetal-operator 0.14 managers (watching
	// fastNamespace) beside the 0.13.2 ones (watching hostNamespace), in
	// the same clusters; nil without 0.14's manager, fastMissing says why.
	fast        map[crds.Variant]*bmo
	fastMissing string
}

var shared = struct {
	once    sync.Once
	s       *suite
	missing string
	stop    func() error
	err     error
}{}

// hostsAtOnce is how many hosts' subtests run at once unless -test.parallel
// says otherwise: each waits on BMO and Ironic (other processes), so the
// default (GOMAXPROCS, 2 here) would queue the 0.14 hosts behind the two
// 0.13.2 ones and add their whole time to the run.
const hostsAtOnce = 6

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", strconv.Itoa(hostsAtOnce)); err != nil {
			fmt.Fprintf(os.Stderr, "set -test.parallel: %v\n", err)
			os.Exit(2)
		}
	}
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
	crds013 := filepath.Join(testutil.SharedDir(t, bmoSource...), "config", "base", "crds", "bases", "*.yaml")
	crds014 := filepath.Join(testutil.SharedDir(t, bmoFastSource...), "config", "base", "crds", "bases", "*.yaml")
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
		manager, err := managerPath(t.Context(), "0.13.2")
		if err != nil {
			shared.err = err
			return
		}
		if _, err := os.Stat(manager); err != nil {
			shared.missing = fmt.Sprintf("no baremetal-operator manager (make bmo): %v", err)
			return
		}
		fast, err := managerPath(t.Context(), "0.14")
		if err != nil {
			shared.err = err
			return
		}
		crdGlob := crds014
		if _, err := os.Stat(fast); err != nil {
			fast, crdGlob = "", crds013
		}
		start := time.Now()
		shared.s, shared.stop, shared.err = startSuite(release, manager, fast, crdGlob)
		if shared.err == nil {
			t.Logf("TIMING metal3 suite (Ironic 39, a demo and baremetal-operator managers, 0.13.2 and 0.14, per variant) ready in %s", time.Since(start).Round(time.Millisecond))
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
// manager per demo, and a 0.14 manager (fast) per demo beside it unless
// fast is "". They outlive the test that starts them (TestMain
// calls stop): not t.Context().
func startSuite(release ironicproc.Release, manager, fast, crdGlob string) (*suite, func() error, error) {
	dir, err := os.MkdirTemp("", "redfish-bridge-metal3-")
	if err != nil {
		return nil, nil, fmt.Errorf("temp dir: %w", err)
	}
	s := &suite{envs: map[crds.Variant]*demo.Env{}, bmos: map[crds.Variant]*bmo{}, fast: map[crds.Variant]*bmo{}, release: release}
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
			VMediaInsertPolling:  true,      // as Ironic's operators run it: every insert reads back Inserted
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
				Events: eventdelivery.Config{AddrPolicy: mustAddrPolicy(eventPolicy)},
			})
			if err == nil {
				err = env.Cluster.InstallCRDFiles(ctx, crdGlob)
			}
			if err == nil {
				err = env.Cluster.CreateNamespace(ctx, hostNamespace)
			}
			if err == nil && fast != "" {
				err = env.Cluster.CreateNamespace(ctx, fastNamespace)
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
		b, err := startBMO(manager, filepath.Join(dir, "bmo-"+string(v)), s.envs[v].Cluster.Kubeconfig, s.ironic.URL, hostNamespace)
		if err != nil {
			return nil, nil, errors.Join(err, stop())
		}
		s.bmos[v] = b
		if fast == "" {
			s.fastMissing = "no baremetal-operator 0.14 manager (make bmo)"
			continue
		}
		b, err = startBMO(fast, filepath.Join(dir, "bmo-0.14-"+string(v)), s.envs[v].Cluster.Kubeconfig, s.ironic.URL, fastNamespace)
		if err != nil {
			return nil, nil, errors.Join(err, stop())
		}
		s.fast[v] = b
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
	for v, b := range s.fast {
		if err := b.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop %s baremetal-operator 0.14: %w", v, err))
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
