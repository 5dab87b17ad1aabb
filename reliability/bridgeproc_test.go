package reliability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/testcluster"
)

// buildBridge builds cmd/redfish-bridge into dir and returns the binary.
func buildBridge(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "redfish-bridge")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, //nolint:gosec // fixed arguments
		"github.com/redfish-bridge/redfish-bridge/cmd/redfish-bridge").CombinedOutput()
	if err != nil {
		return "", errors.New("go build cmd/redfish-bridge: " + err.Error() + ": " + string(out))
	}
	return bin, nil
}

// bridgeProc is `redfish-bridge serve` running as a child process.
type bridgeProc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startBridgeProc runs the bridge binary against cluster, serving plain
// HTTP on addr for namespace ns, with a fixed leader identity (a restarted
// pod keeps its name), and waits until it answers for system.
func startBridgeProc(t *testing.T, bin string, cluster *testcluster.Cluster, addr, ns string, a auth, system string) *bridgeProc {
	t.Helper()
	log := filepath.Join(t.TempDir(), "bridge.log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", //nolint:gosec,noctx // our own binary; killed by the test
		"--kubeconfig="+cluster.BridgeKubeconfig, "--namespace="+cluster.BridgeNamespace, "--namespaces="+ns,
		"--service-uuid=5b0c2a4e-2d1f-4c36-9e67-fa0f0b7e7a11", "--listen="+addr, "--insecure-http",
		"--metrics-listen=", "--pod-name=bridge-0")
	cmd.Env = append(os.Environ(), "REDFISH_BRIDGE_LOG=text")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("start bridge: %v", err)
	}
	p := &bridgeProc{cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			t.Logf("bridge log tail (pid %d):\n%s", cmd.Process.Pid, p.tail())
		}
	})
	hc := &http.Client{Timeout: 10 * time.Second}
	waitFor(t, "the bridge (pid "+strconv.Itoa(cmd.Process.Pid)+") to serve "+system, func() (bool, string) {
		select {
		case <-p.done:
			t.Fatalf("bridge exited: %s", p.tail())
		default:
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+system, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(a.user, a.password)
		resp, err := hc.Do(req)
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *bridgeProc) kill(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill bridge: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Errorf("bridge pid %d still there 30s after SIGKILL", p.cmd.Process.Pid)
	}
}

func (p *bridgeProc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// freeAddr is a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
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
