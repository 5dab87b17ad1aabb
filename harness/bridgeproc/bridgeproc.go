package bridgeproc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// ServiceUUID is the Redfish service root UUID every started bridge uses.
const ServiceUUID = "5b0c2a4e-2d1f-4c36-9e67-fa0f0b7e7a11"

// Build builds cmd/redfish-bridge into dir as the image does (-trimpath,
// no symbol table) and returns the binary's path. The working directory
// must be inside the module.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "redfish-bridge")
	out, err := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, // fixed arguments
		"github.com/redfish-bridge/redfish-bridge/cmd/redfish-bridge").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build cmd/redfish-bridge: %w: %s", err, out)
	}
	return bin, nil
}

// Options say how to run `redfish-bridge serve`.
type Options struct {
	// Bin is the redfish-bridge binary ([Build]).
	Bin string
	// Kubeconfig is the bridge's identity (testcluster's BridgeKubeconfig).
	Kubeconfig string
	// Namespace holds the bridge's own Secrets, ConfigMap and Lease.
	Namespace string
	// Namespaces are the VM namespaces served; empty serves all.
	Namespaces []string
	// Listen is the Redfish address ([FreeAddr]): plain HTTP, or HTTPS
	// when TLSCert and TLSKey (PEM files) are set.
	Listen          string
	TLSCert, TLSKey string
	// MetricsListen is the address of /metrics; empty disables it.
	MetricsListen string
	// PodName is the leader identity; default "bridge-0". A bridge started
	// again with the same name is a restarted pod.
	PodName string
	// Log is the file receiving the bridge's output (text logs).
	Log string
	// Args are further serve flags, e.g. "--max-header-bytes=1048576".
	Args []string
	// Env are further environment variables (NAME=value), e.g. the
	// GOMEMLIMIT a deployment sets.
	Env []string
}

// Proc is `redfish-bridge serve` running as a child process.
type Proc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// Start runs the bridge as [Options] say. It does not wait for it to
// serve: see [Proc.WaitServing]. End it with [Proc.Kill].
func Start(o Options) (*Proc, error) {
	if o.PodName == "" {
		o.PodName = "bridge-0"
	}
	f, err := os.Create(o.Log)
	if err != nil {
		return nil, fmt.Errorf("bridge log: %w", err)
	}
	args := []string{"serve",
		"--kubeconfig=" + o.Kubeconfig, "--namespace=" + o.Namespace, "--namespaces=" + strings.Join(o.Namespaces, ","),
		"--service-uuid=" + ServiceUUID, "--listen=" + o.Listen}
	if o.TLSCert != "" {
		args = append(args, "--tls-cert="+o.TLSCert, "--tls-key="+o.TLSKey)
	} else {
		args = append(args, "--insecure-http")
	}
	args = append(append(args, "--metrics-listen="+o.MetricsListen, "--pod-name="+o.PodName), o.Args...)
	cmd := exec.Command(o.Bin, args...) // our own binary; ended by Kill
	cmd.Env = append(append(os.Environ(), "REDFISH_BRIDGE_LOG_FORMAT=text"), o.Env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start bridge %s: %w", o.Bin, err)
	}
	p := &Proc{cmd: cmd, log: o.Log, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	return p, nil
}

// RSS is the bridge's resident set size in bytes (VmRSS; Linux only).
func (p *Proc) RSS() (int64, error) { return testcluster.ProcessRSS(p.Pid()) }

// Pid is the bridge's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// WaitServing polls GET url with Basic auth every 250 ms until it answers
// 200, the process exits or ctx ends. An https url's certificate is not
// verified (the bridge's own, self-signed on loopback).
func (p *Proc) WaitServing(ctx context.Context, url, user, password string) error {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the bridge's self-signed certificate on loopback
	}}
	var last string // what the last poll got
	for {
		select {
		case <-p.done:
			return fmt.Errorf("bridge (pid %d) exited before serving %s: %s", p.Pid(), url, p.Tail())
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("wait for the bridge: %w", err)
		}
		req.SetBasicAuth(user, password)
		if resp, err := hc.Do(req); err != nil {
			last = err.Error()
		} else {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the bridge (pid %d) to serve %s: %w; last: %s", p.Pid(), url, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Kill sends SIGKILL and waits (at most 30 s) until the process is gone.
// Killing an exited process does nothing.
func (p *Proc) Kill() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill bridge pid %d: %w", p.Pid(), err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("bridge pid %d still there 30s after SIGKILL", p.Pid())
	}
}

// Tail is the end of the bridge's log (at most 4000 bytes).
func (p *Proc) Tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// FreeAddr is a loopback address that was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close() // only probing
	return l.Addr().String(), nil
}
