package service_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/service"
)

// waitTimeout bounds every wait in these tests.
const waitTimeout = 30 * time.Second

// env is a test cluster with the simulator, one sample VM, the bridge's
// accounts and a gated image server.
type env struct {
	c        *testcluster.Cluster
	ns       string
	admin    dynamic.Interface
	sim      *sim.Simulator
	password string
	log      *slog.Logger
	image    *gatedImage
}

func newEnv(t *testing.T, v crds.Variant) *env {
	t.Helper()
	c := testcluster.ForTestWith(t, testcluster.Options{Variant: v, VirtController: true})
	e := &env{c: c, ns: "vms", admin: dynamic.NewForConfigOrDie(c.Admin)}
	level := slog.LevelWarn
	if os.Getenv("SERVICE_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	e.log = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: level}))
	e.password = seed(t, c, e.ns)
	e.sim = sim.RunForTest(t, c.Admin, sim.Options{Namespaces: []string{e.ns}, Log: e.log})
	e.image = newGatedImage(t, 256<<10)
	return e
}

// seed creates namespace ns on c with one sample VM, and the bridge's
// accounts (the demo's users Secret, session key and revocations), and
// returns the admin's password.
func seed(t *testing.T, c *testcluster.Cluster, ns string) string {
	t.Helper()
	ctx := t.Context()
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	password, err := demo.CreateAccounts(ctx, kubernetes.NewForConfigOrDie(c.Admin), c.BridgeNamespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.CreateSampleVMs(ctx, dynamic.NewForConfigOrDie(c.Admin), ns, 1); err != nil {
		t.Fatal(err)
	}
	return password
}

// seededStock is a stock cluster seeded with namespace "vms" (seed);
// under -short the test is skipped.
func seededStock(t *testing.T) (*testcluster.Cluster, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	c := testcluster.ForTest(t, crds.Stock)
	const ns = "vms"
	seed(t, c, ns)
	return c, ns
}

// bridgeConfig is the configuration of a replica with identity id that
// serves namespace ns of cluster c through kube, with the accounts seed
// created, on a free port of 127.0.0.1.
func bridgeConfig(c *testcluster.Cluster, kube *rest.Config, ns, id string) service.Config {
	return service.Config{
		Kube: kube, Namespaces: []string{ns}, Namespace: c.BridgeNamespace,
		UsersSecret: demo.UsersSecret, SessionKeySecret: demo.SessionKeySecret, RevocationsConfigMap: demo.RevocationsConfigMap,
		Listen: "127.0.0.1:0", ServiceUUID: "0a8c1a52-5e7e-4e0c-9a55-5f1f3a1c2b3d", Version: "test",
		Leader: service.LeaderElection{Identity: id},
	}
}

// bridge is one started replica.
type bridge struct {
	*service.Running
	stop func()
}

// start starts a replica with identity id and short lease timings; it
// stops at the end of the test at the latest.
func (e *env) start(t *testing.T, id string) *bridge {
	t.Helper()
	return e.startWith(t, id, nil)
}

// startWith is start with the configuration edited by edit (nil: as it is).
func (e *env) startWith(t *testing.T, id string, edit func(*service.Config)) *bridge {
	t.Helper()
	// The user agent the served binary sets (cmd/redfish-bridge): the
	// apiserver records the objects media creates under its name, as in
	// a real deployment (docs/fields-example*.txt show it).
	kube := rest.CopyConfig(e.c.Bridge)
	kube.UserAgent = "redfish-bridge/test"
	ctx, cancel := context.WithCancel(t.Context())
	cfg := bridgeConfig(e.c, kube, e.ns, id)
	cfg.MetricsListen = "127.0.0.1:0"
	cfg.Leader.LeaseDuration, cfg.Leader.RenewDeadline, cfg.Leader.RetryPeriod = 3*time.Second, 2*time.Second, 200*time.Millisecond
	cfg.Log = e.log.With("replica", id)
	if edit != nil {
		edit(&cfg)
	}
	r, err := service.Start(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("start bridge %s: %v", id, err)
	}
	var once sync.Once
	b := &bridge{Running: r}
	b.stop = func() {
		once.Do(func() {
			cancel()
			if err := r.Wait(); err != nil {
				t.Errorf("bridge %s: %v", id, err)
			}
		})
	}
	t.Cleanup(b.stop)
	return b
}

// call sends a Redfish request as the admin and returns the status and the
// decoded JSON body (nil when empty).
func (e *env) call(t *testing.T, b *bridge, method, path string, body any) (int, map[string]any) {
	t.Helper()
	r := testutil.Redfish{Base: "http://" + b.Addr, User: demo.AdminUser, Password: e.password}.Do(t, method, path, body)
	return r.Status, r.JSON(t)
}

// eventually polls cond every 100 ms until it holds or waitTimeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, what, waitTimeout, 100*time.Millisecond, testutil.True(cond))
}

// gatedImage serves one image whose GET bodies wait until open is called
// (HEAD answers at once, so the PVC can be sized).
type gatedImage struct {
	*httptest.Server
	data     []byte
	gate     chan struct{}
	openOnce sync.Once
}

func newGatedImage(t *testing.T, size int) *gatedImage {
	t.Helper()
	g := &gatedImage{data: bytes.Repeat([]byte("redfish-bridge "), size/15+1)[:size], gate: make(chan struct{})}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			select {
			case <-g.gate:
			case <-r.Context().Done():
				return
			}
		}
		http.ServeContent(w, r, "boot.iso", time.Time{}, bytes.NewReader(g.data))
	}))
	t.Cleanup(func() {
		g.open()
		g.Close()
	})
	return g
}

func (g *gatedImage) open() { g.openOnce.Do(func() { close(g.gate) }) }

func (g *gatedImage) url() string { return g.URL + "/boot.iso" }
