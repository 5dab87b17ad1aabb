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
	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// ISO files the conductor's http_root serves (the contents do not matter:
// the simulated KubeVirt never boots them).
const (
	deployISO = "deploy.iso" // the agent ramdisk of the custom-agent deploy and of cleaning
	bootISO   = "boot.iso"   // the instance of the ramdisk deploy
)

// syncInterval is the conductor's power-state sync period.
const syncInterval = 3 * time.Second

// suite is what the scenarios of one conductor share: its Ironic, and the
// demos (cluster, simulator, bridge) per CRD variant, each behind a
// recording proxy, which every conductor shares (each enrolls VMs of its
// own: vmIndex).
type suite struct {
	release ironicproc.Release
	ord     int // the release's index in releases
	ironic  *ironicproc.Ironic
	api     *ironicproc.Client
	envs    map[crds.Variant]*demo.Env
	recs    map[crds.Variant]*recorder
	forces  map[crds.Variant]*forceCounter
	// ipmiPorts is the first port of each demo's IPMI range (numIPMIPorts
	// ports).
	ipmiPorts map[crds.Variant]int
	// cas are the private CAs of the HTTPS image servers (httpsca_test.go).
	cas imageCAs
}

// conductor is one release of [releases]: its suite, or why it cannot run.
type conductor struct {
	release ironicproc.Release
	s       *suite
	missing string
}

var shared = struct {
	once       sync.Once
	conductors []conductor
	stop       func() error
	err        error
}{}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.stop != nil {
		start := time.Now()
		err := shared.stop()
		fmt.Fprintf(os.Stderr, "TIMING ironic suite stopped in %s\n", time.Since(start).Round(time.Millisecond))
		if err != nil {
			fmt.Fprintf(os.Stderr, "stop the ironic suite: %v\n", err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// numConductors is len(releases): Debian 12's Ironic 21.4 on the host and
// Debian unstable's Ironic 39 in the chroot of hack/ironic-chroot.sh.
const numConductors = 2

// releases are the Ironics every scenario runs with.
func releases(t *testing.T) []ironicproc.Release {
	t.Helper()
	root, err := ironicproc.ChrootPath(t.Context(), testutil.ModuleRoot(t))
	if err != nil {
		t.Fatalf("Ironic 39 chroot: %v", err)
	}
	return []ironicproc.Release{ironicproc.Host, ironicproc.Chroot(root)}
}

// conductorsFor returns the conductors, starting them and the demos on
// first use. A release that cannot run here has its reason in missing (the
// caller skips its scenarios, or fails them under CI=true); when none can,
// nothing is started.
func conductorsFor(t *testing.T) []conductor {
	t.Helper()
	shared.once.Do(func() {
		var run []ironicproc.Release
		for _, r := range releases(t) {
			c := conductor{release: r}
			if err := r.Available(t.Context()); err != nil {
				c.missing = err.Error()
			} else {
				run = append(run, r)
			}
			shared.conductors = append(shared.conductors, c)
		}
		if len(run) == 0 {
			return
		}
		start := time.Now()
		var suites map[string]*suite
		suites, shared.stop, shared.err = startSuite(run)
		for i := range shared.conductors {
			shared.conductors[i].s = suites[shared.conductors[i].release.Name]
		}
		if shared.err == nil {
			t.Logf("TIMING ironic suite (%d Ironic(s) + demo per variant) ready in %s", len(run), time.Since(start).Round(time.Millisecond))
		}
	})
	if shared.err != nil {
		t.Fatalf("start the ironic suite: %v", shared.err)
	}
	return shared.conductors
}

// startSuite starts an Ironic per release and the demos, all at once. They
// outlive the test that starts them (TestMain calls stop): not
// t.Context().
func startSuite(run []ironicproc.Release) (map[string]*suite, func() error, error) {
	dir, err := os.MkdirTemp("", "redfish-bridge-ironic-")
	if err != nil {
		return nil, nil, fmt.Errorf("temp dir: %w", err)
	}
	envs, recs, forces := map[crds.Variant]*demo.Env{}, map[crds.Variant]*recorder{}, map[crds.Variant]*forceCounter{}
	ipmiPorts := map[crds.Variant]int{}
	for _, v := range crds.Variants {
		forces[v] = newForceCounter()
		if ipmiPorts[v], err = freeUDPRange(numIPMIPorts); err != nil {
			return nil, nil, err
		}
	}
	cas, err := newImageCAs()
	if err != nil {
		return nil, nil, err
	}
	suites := map[string]*suite{}
	for i, r := range run {
		ord := i
		if r.Name != ironicproc.Host.Name {
			ord = 1 // the chroot's VMs stay its own whether or not the host's runs
		}
		suites[r.Name] = &suite{release: r, ord: ord, envs: envs, recs: recs, forces: forces, ipmiPorts: ipmiPorts, cas: cas}
	}
	stop := func() error { return stopAll(dir, suites, envs, recs) }
	// A bound for a start that fails, not a window: at load 45-50 the
	// start took 2 min 51 s, and twice more than 3 min (virt-api not
	// answering, virt-controller not done syncing the demo's VMs).
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, s := range suites {
		wg.Go(func() {
			start := time.Now()
			ir, err := ironicproc.Start(ctx, s.withImageCAs(ironicproc.Options{
				Dir:                    filepath.Join(dir, "ironic-"+s.release.Name),
				Release:                s.release,
				SyncPowerInterval:      syncInterval,
				CheckProvisionInterval: 3 * time.Second,
				CallbackTimeout:        callbackTimeout,
				// As Ironic 39's operators run it: every insert is read
				// back until the slot reads Inserted (checkInsertPolled).
				// Ironic 21.4 has no such option (its [redfish] section
				// predates it, and oslo.config ignores an option it does
				// not know): it inserts and boots without reading back.
				VMediaInsertPolling: s.is39(),
			}))
			fmt.Fprintf(os.Stderr, "TIMING Ironic %s started in %s\n", s.release.Name, time.Since(start).Round(time.Millisecond))
			mu.Lock()
			defer mu.Unlock()
			s.ironic = ir
			if err != nil {
				err = fmt.Errorf("Ironic %s: %w", s.release.Name, err)
			}
			errs = append(errs, err)
		})
	}
	for _, v := range crds.Variants {
		wg.Go(func() {
			env, err := demo.Start(ctx, demo.Options{
				Variant: v, VMs: numVMs, Listen: "127.0.0.1:0",
				StartDelay: 200 * time.Millisecond, StopDelay: stopDelay,
				VirtAPI: true, GracePeriodSeconds: gracePeriod, WrapKube: forces[v].wrap,
				ImageSize: 1 << 20, Log: log, IPMI: ipmiConfig(ipmiPorts[v], numIPMIPorts),
				Events: eventdelivery.Config{AddrPolicy: mustAddrPolicy(eventPolicy)},
			})
			var rec *recorder
			if err == nil {
				rec, err = startRecorder(env.URL)
			}
			if err == nil {
				err = giveIPMIPassword(env)
			}
			if err == nil {
				err = cas.trustInBridge(env)
			}
			mu.Lock()
			defer mu.Unlock()
			if env != nil {
				envs[v] = env
			}
			if rec != nil {
				recs[v] = rec
			}
			errs = append(errs, err)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	for _, s := range suites {
		s.api = ironicproc.NewClient(s.ironic.URL)
		s.api.Version = s.release.APIVersion
		for i, name := range []string{deployISO, bootISO} {
			data := make([]byte, 1<<20)
			r := rand.New(rand.NewPCG(uint64(i+1), 7))
			for j := range data {
				data[j] = byte(r.Uint32())
			}
			if err := os.WriteFile(filepath.Join(s.ironic.HTTPRoot, name), data, 0o644); err != nil { // served to the simulator
				return nil, nil, errors.Join(fmt.Errorf("write %s: %w", name, err), stop())
			}
		}
	}
	return suites, stop, nil
}

// contextFor bounds a call of the suite's setup.
func contextFor() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

// imageURL is where the conductor's HTTP server offers name.
func (s *suite) imageURL(name string) string { return s.ironic.HTTPURL + "/" + name }

// stopAll stops the Ironics, the recorders and the demos, and removes dir.
func stopAll(dir string, suites map[string]*suite, envs map[crds.Variant]*demo.Env, recs map[crds.Variant]*recorder) error {
	var errs []error
	for _, r := range recs {
		r.Close()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for v, e := range envs {
		wg.Go(func() {
			if err := e.Stop(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("stop %s demo: %w", v, err))
				mu.Unlock()
			}
		})
	}
	for _, s := range suites {
		if s.ironic == nil {
			continue
		}
		wg.Go(func() {
			start := time.Now()
			err := s.ironic.Stop()
			fmt.Fprintf(os.Stderr, "TIMING Ironic %s stopped in %s\n", s.release.Name, time.Since(start).Round(time.Millisecond))
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

// is39 reports whether the suite's Ironic is the chroot's (39), whose
// behaviour differs from 21.4's where the scenarios say so.
func (s *suite) is39() bool { return s.release.Root != "" }

// conductorLog is Ironic's log lines naming uuid (the last n).
func (s *suite) conductorLog(uuid string, n int) string { return s.ironic.LogTail(n, uuid) }
