package bench

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/harness/bridgeproc"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// consoleNS holds the console benchmark's VMs.
const consoleNS = "bench-console"

// ConsoleScenario says what [Console] measures.
type ConsoleScenario struct {
	// VMs is how many consoles are open at once for the memory figure,
	// one per running VM (KubeVirt keeps one console connection per VMI).
	VMs int
	// Bytes go through one console over SSH for the throughput figure,
	// SOLBytes through one over IPMI SOL (ipmitool).
	Bytes, SOLBytes int
	// Log receives the cluster's and the simulator's logs.
	Log *slog.Logger
	// BridgeLog is the bridge process's log file ("" : in a temporary
	// directory).
	BridgeLog string
}

// ConsoleResult is what [Console] measured.
type ConsoleResult struct {
	Scenario ConsoleScenario
	Setup    time.Duration
	// Echoed bytes went from the SSH client to the guest and back in
	// Elapsed, every one checked in order.
	Echoed  int
	Elapsed time.Duration
	// RSSBefore and RSSAfter are the bridge process's resident set before
	// Opened consoles were open at once and while they were.
	RSSBefore, RSSAfter int64
	Opened              int
	// SOLEchoed bytes went from ipmitool's sol activate to the guest and
	// back in SOLElapsed; SOLSkipped says why not, when not.
	SOLEchoed  int
	SOLElapsed time.Duration
	SOLSkipped string
}

// Console measures the bridge's serial console on a real kube-apiserver,
// KubeVirt's virt-api and the simulator's guests, with the bridge binary
// as a process of its own serving the SSH console: the bytes per second
// one console carries from an SSH client (golang.org/x/crypto/ssh) to the
// guest and back (the guest echoes: each byte crosses the bridge, virt-api
// and the serial port twice), and the bridge's RSS growth per open
// console. res holds what was measured even when err is set.
func Console(ctx context.Context, sc ConsoleScenario) (res *ConsoleResult, err error) {
	start := time.Now()
	res = &ConsoleResult{Scenario: sc}
	bb, err := buildBridge(ctx, "bench-console-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(bb.dir) // best effort
	dir, built := bb.dir, bb.done
	cluster, err := testcluster.Start(ctx, testcluster.Options{VirtAPI: true, Log: sc.Log})
	if err != nil {
		return res, errors.Join(fmt.Errorf("start cluster: %w", err), <-built)
	}
	defer func() { err = errors.Join(err, cluster.Stop()) }()
	stopSim, err := runConsoleGuests(ctx, cluster, sc, dir)
	if err != nil {
		return res, errors.Join(err, <-built)
	}
	defer func() { err = errors.Join(err, stopSim()) }()
	password, err := consoleVMs(ctx, cluster, sc.VMs+2)
	if err != nil {
		return res, errors.Join(err, <-built)
	}
	if err := <-built; err != nil {
		return res, err
	}
	sol, err := giveSOL(ctx, cluster, "vm-"+strconv.Itoa(sc.VMs+1))
	if err != nil {
		return res, err
	}
	p, sshAddr, err := startConsoleBridge(ctx, cluster, sc, bb.bin, dir, password, sol.port)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, p.Kill()) }()
	res.Setup = time.Since(start)
	cfg := &ssh.ClientConfig{User: demo.AdminUser, Auth: []ssh.AuthMethod{ssh.Password(password)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey()} // #nosec G106 -- the bench's own bridge, its key made above
	if err := measureEcho(ctx, sshAddr, cfg, "vm-0", sc.Bytes, res); err != nil {
		return res, fmt.Errorf("%w\nbridge log tail:\n%s", err, p.Tail())
	}
	// A failed SOL figure is reported at the end: the memory one still runs.
	solErr := measureSOL(ctx, sol, sc.SOLBytes, res)
	if solErr != nil {
		res.SOLSkipped = solErr.Error()
		solErr = fmt.Errorf("%w\nbridge log tail:\n%s", solErr, p.Tail())
	}
	if res.RSSBefore, err = ProcRSS(p.Pid()); err != nil {
		return res, err
	}
	consoles, err := openConsoles(ctx, sshAddr, cfg, sc.VMs)
	defer consoles.close()
	res.Opened = len(consoles)
	if err != nil {
		return res, fmt.Errorf("%w\nbridge log tail:\n%s", err, p.Tail())
	}
	if res.RSSAfter, err = ProcRSS(p.Pid()); err != nil {
		return res, err
	}
	return res, solErr
}

// runConsoleGuests runs the simulator as virt-handler (the guests behind
// the consoles) until the returned stop is called.
func runConsoleGuests(ctx context.Context, cluster *testcluster.Cluster, sc ConsoleScenario, dir string) (func() error, error) {
	if err := cluster.CreateNamespace(ctx, consoleNS); err != nil {
		return nil, err
	}
	s, err := sim.New(cluster.VirtHandler, sim.Options{Namespaces: []string{consoleNS}, DataDir: filepath.Join(dir, "images"), Log: sc.Log})
	if err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	simCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(simCtx) }()
	return func() error {
		cancel()
		return <-done
	}, nil
}

// consoleVMs writes the accounts and creates n running VMs vm-0 ...
// vm-<n-1>, waiting until each VMI runs; it returns the admin's password.
func consoleVMs(ctx context.Context, cluster *testcluster.Cluster, n int) (string, error) {
	kube, err := kubernetes.NewForConfig(cluster.Admin)
	if err != nil {
		return "", fmt.Errorf("admin client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cluster.Admin)
	if err != nil {
		return "", fmt.Errorf("admin dynamic client: %w", err)
	}
	password, err := demo.CreateAccounts(ctx, kube, cluster.BridgeNamespace)
	if err != nil {
		return "", err
	}
	for i := range n {
		if _, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(consoleNS).Create(ctx, testutil.VM(consoleNS, "vm-"+strconv.Itoa(i), "Always"), metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("create vm-%d: %w", i, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for {
		list, err := dyn.Resource(kubevirt.VirtualMachineInstances).Namespace(consoleNS).List(wctx, metav1.ListOptions{})
		running := 0
		if err == nil {
			for i := range list.Items {
				if kubevirt.PhaseOf(&list.Items[i]) == "Running" {
					running++
				}
			}
			if running == n {
				return password, nil
			}
		}
		select {
		case <-wctx.Done():
			return "", fmt.Errorf("%d of %d VMIs running: %w", running, n, errors.Join(err, wctx.Err()))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startConsoleBridge starts the bridge binary serving the SSH console and
// IPMI on ipmiPort (plain HTTP for Redfish) and waits until it serves; it returns the
// process and the SSH console's address.
func startConsoleBridge(ctx context.Context, cluster *testcluster.Cluster, sc ConsoleScenario, bin, dir, password string, ipmiPort int) (*bridgeproc.Proc, string, error) {
	addr, err := bridgeproc.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	sshAddr, err := bridgeproc.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	keyFile, err := writeSSHHostKey(dir)
	if err != nil {
		return nil, "", err
	}
	limit := strconv.Itoa(sc.VMs + 2)
	p, err := bridgeproc.Start(bridgeproc.Options{
		Bin: bin, Kubeconfig: cluster.BridgeKubeconfig, Namespace: cluster.BridgeNamespace, Listen: addr,
		Log: cmpOr(sc.BridgeLog, filepath.Join(dir, "bridge.log")),
		Args: []string{"--ssh-console-listen=" + sshAddr, "--ssh-console-host-key=" + keyFile, "--console-max-per-user=" + limit, "--console-max-sessions=" + limit,
			"--ipmi-address=127.0.0.1", "--ipmi-first-port=" + strconv.Itoa(ipmiPort), "--ipmi-last-port=" + strconv.Itoa(ipmiPort)},
	})
	if err != nil {
		return nil, "", err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := p.WaitServing(wctx, "http://"+addr+"/redfish/v1/Systems", demo.AdminUser, password); err != nil {
		return nil, "", errors.Join(fmt.Errorf("%w\nbridge log tail:\n%s", err, p.Tail()), p.Kill())
	}
	return p, sshAddr, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// writeSSHHostKey writes a new ed25519 host key (PEM) into dir.
func writeSSHHostKey(dir string) (string, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "ssh_host_key")
	return path, os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
}

// consoleConn is one open SSH console: its client, session, stdin and
// stdout.
type consoleConn struct {
	client *ssh.Client
	sess   *ssh.Session
	in     io.WriteCloser
	out    io.Reader
}

// openConsole opens the console of vm and reads until the guest's login
// prompt (after the Enter it sends): the stream is open end to end.
func openConsole(ctx context.Context, addr string, cfg *ssh.ClientConfig, vm string) (*consoleConn, error) {
	client, err := ssh.Dial("tcp", addr, cfg)
	if err != nil {
		return nil, fmt.Errorf("ssh to %s: %w", addr, err)
	}
	c := &consoleConn{client: client}
	if c.sess, err = client.NewSession(); err == nil {
		if c.in, err = c.sess.StdinPipe(); err == nil {
			if c.out, err = c.sess.StdoutPipe(); err == nil {
				err = c.sess.Start(consoleNS + "." + vm)
			}
		}
	}
	if err == nil {
		_, err = c.in.Write([]byte("\r"))
	}
	if err == nil {
		err = readUntil(ctx, c.out, []byte(sim.GuestLoginPrompt(vm)))
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("console of %s: %w", vm, err)
	}
	return c, nil
}

func (c *consoleConn) close() {
	_ = c.client.Close() // ends the session and the stream
}

// readUntil reads r until it has seen want; the ctx ending stops the wait
// (the read itself ends when the connection closes).
func readUntil(ctx context.Context, r io.Reader, want []byte) error {
	found := make(chan error, 1)
	go func() {
		var seen []byte
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			seen = append(seen, buf[:n]...)
			if bytes.Contains(seen, want) {
				found <- nil
				return
			}
			if err != nil {
				found <- fmt.Errorf("read %q: %w (read %q)", want, err, seen)
				return
			}
		}
	}()
	select {
	case err := <-found:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// consoles are consoles open at once.
type consoles []*consoleConn

func (cs consoles) close() {
	for _, c := range cs {
		c.close()
	}
}

// openConsoles opens the consoles of vm-1 ... vm-n, eight at a time, and
// returns those it opened.
func openConsoles(ctx context.Context, addr string, cfg *ssh.ClientConfig, n int) (consoles, error) {
	var mu sync.Mutex
	var open consoles
	var errs []error
	slots := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			c, err := openConsole(ctx, addr, cfg, "vm-"+strconv.Itoa(i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			open = append(open, c)
		})
	}
	wg.Wait()
	return open, errors.Join(errs...)
}
