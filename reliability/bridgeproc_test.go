package reliability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// bridgeProc is `redfish-bridge serve` running as a child process.
type bridgeProc struct{ *bridgeproc.Proc }

// startBridgeProc runs the bridge binary against cluster, serving plain
// HTTP on addr for namespace ns, with a fixed leader identity (a restarted
// pod keeps its name), and waits until it answers for system.
func startBridgeProc(t *testing.T, bin string, cluster *testcluster.Cluster, addr, ns string, a auth, system string) bridgeProc {
	t.Helper()
	return startBridgeWith(t, cluster, bridgeproc.Options{Bin: bin, Namespaces: []string{ns}, Listen: addr}, a, system)
}

// startBridgeWith runs the bridge binary as o says (its kubeconfig,
// namespace and log filled in for cluster), waits until it answers for
// system, and kills it when the test ends, showing its log's tail if the
// test failed.
func startBridgeWith(t *testing.T, cluster *testcluster.Cluster, o bridgeproc.Options, a auth, system string) bridgeProc {
	t.Helper()
	o.Kubeconfig, o.Namespace = cluster.BridgeKubeconfig, cluster.BridgeNamespace
	o.Log = filepath.Join(t.TempDir(), "bridge.log")
	p, err := bridgeproc.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	bp := bridgeProc{p}
	t.Cleanup(func() {
		bp.kill(t)
		if t.Failed() {
			t.Logf("bridge log tail (pid %d):\n%s", p.Pid(), p.Tail())
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), settle)
	defer cancel()
	if err := p.WaitServing(ctx, "http://"+o.Listen+system, a.user, a.password); err != nil {
		t.Fatal(err)
	}
	return bp
}

// clusterWithAdmin starts a stock cluster for the test with the demo's
// accounts and returns it with the admin's credentials.
func clusterWithAdmin(t *testing.T) (*testcluster.Cluster, auth) {
	t.Helper()
	cluster := testcluster.ForTest(t, crds.Stock)
	kube, err := kubernetes.NewForConfig(cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	password, err := demo.CreateAccounts(t.Context(), kube, cluster.BridgeNamespace)
	if err != nil {
		t.Fatal(err)
	}
	return cluster, auth{user: demo.AdminUser, password: password}
}

// buildBridge starts building the bridge binary and returns a function
// that waits for it and returns its path (the build overlaps the cluster's
// start).
func buildBridge(t *testing.T) func() string {
	t.Helper()
	built := make(chan error, 1)
	var bin string
	go func() {
		var err error
		bin, err = bridgeproc.Build(t.Context(), t.TempDir())
		built <- err
	}()
	return func() string {
		t.Helper()
		if err := <-built; err != nil {
			t.Fatal(err)
		}
		return bin
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p bridgeProc) kill(t *testing.T) {
	t.Helper()
	if err := p.Kill(); err != nil {
		t.Error(err)
	}
}

// freeAddr is a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := bridgeproc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// gatedImage serves one image whose downloads stop halfway until release
// is called: an import held in flight for as long as the test needs.
type gatedImage struct {
	URL     string
	SHA256  string
	started chan struct{} // closed when a download reached the gate
	release func()
	gets    int
	mu      sync.Mutex
}

func newGatedImage(t *testing.T, size int) *gatedImage {
	t.Helper()
	data := bytes.Repeat([]byte("redfish-bridge fault test image\n"), size/32)
	sum := sha256.Sum256(data)
	open := make(chan struct{})
	g := &gatedImage{SHA256: hex.EncodeToString(sum[:]), started: make(chan struct{})}
	var startOnce, releaseOnce sync.Once
	g.release = func() { releaseOnce.Do(func() { close(open) }) }
	t.Cleanup(g.release)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Header().Set("Content-Type", "application/octet-stream")
		if r.Method == http.MethodHead {
			return
		}
		g.mu.Lock()
		g.gets++
		g.mu.Unlock()
		half := len(data) / 2
		_, _ = w.Write(data[:half])
		w.(http.Flusher).Flush()
		startOnce.Do(func() { close(g.started) })
		select {
		case <-open:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(data[half:])
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	g.URL = "http://" + l.Addr().String() + "/images/slow.iso"
	return g
}

func (g *gatedImage) downloads() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gets
}

// crashEnv is what the crash tests run on: a cluster (variant v) with
// KubeVirt's virt-controller, the demo's accounts, the sample VM key
// (demo/vm-0), the simulator as the node and the bridge binary.
type crashEnv struct {
	cluster *testcluster.Cluster
	sim     *sim.Simulator
	bin     string
	a       auth
	key     system.Key
}

func startCrashEnv(t *testing.T, v crds.Variant) crashEnv {
	t.Helper()
	ctx := t.Context()
	binary := buildBridge(t)
	cluster := testcluster.ForTestWith(t, testcluster.Options{Variant: v, VirtController: true})
	kube, err := kubernetes.NewForConfig(cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.CreateNamespace(ctx, demo.VMNamespace); err != nil {
		t.Fatal(err)
	}
	password, err := demo.CreateAccounts(ctx, kube, cluster.BridgeNamespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.CreateSampleVMs(ctx, dyn, demo.VMNamespace, 1); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	simulator, err := sim.New(cluster.Admin, sim.Options{DataDir: t.TempDir(), Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	simCtx, stopSim := context.WithCancel(context.WithoutCancel(ctx))
	simDone := make(chan error, 1)
	go func() { simDone <- simulator.Run(simCtx) }()
	t.Cleanup(func() {
		stopSim()
		if err := <-simDone; err != nil {
			t.Errorf("simulator: %v", err)
		}
	})
	return crashEnv{
		cluster: cluster, sim: simulator, bin: binary(),
		a:   auth{user: demo.AdminUser, password: password},
		key: system.Key{Namespace: demo.VMNamespace, Name: "vm-0"},
	}
}
