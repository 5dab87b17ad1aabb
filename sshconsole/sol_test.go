package sshconsole_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// solPassword is admin's IPMI password.
const solPassword = "sol-ipmi-password"

// stateOnly is the IPMI endpoint's backend for SOL: it reads the System
// (no labels) and writes nothing.
type stateOnly struct{}

func (stateOnly) State(context.Context, system.Key) (ipmi.State, error) { return ipmi.State{}, nil }
func (stateOnly) Reset(context.Context, system.Key, system.ResetType) error {
	return errors.New("not in this test")
}

func (stateOnly) SetBoot(context.Context, system.Key, system.BootPatch) error {
	return errors.New("not in this test")
}

// startIPMI serves System key's IPMI endpoint on a free UDP port of
// 127.0.0.1, its SOL through opener (the SSH console's).
func startIPMI(ctx context.Context, t *testing.T, opener *console.Opener, key system.Key) int {
	t.Helper()
	probe, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := probe.LocalAddr().(*net.UDPAddr).Port
	_ = probe.Close()
	users := auth.StaticUsers{"admin": {Name: "admin", IPMIPassword: []byte(solPassword), Scope: auth.Scope{Namespaces: []string{auth.AllNamespaces}}}}
	srv := ipmi.NewServer(ipmi.Config{Address: "127.0.0.1", FirstPort: port, LastPort: port}, users, stateOnly{}, auth.NewThrottle(), opener)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ipmi server: %v", err)
		}
	})
	if err := srv.Sync(ctx, map[int]system.Key{port: key}); err != nil {
		t.Fatal(err)
	}
	return port
}

// solClient is a running `ipmitool -I lanplus ... sol activate`, its
// stdin piped.
type solClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	out   bytes.Buffer
	grew  chan struct{}
	exit  chan error
}

func (c *solClient) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out.Write(p)
	select {
	case c.grew <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (c *solClient) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

func ipmitoolArgs(port int) []string {
	return []string{"-I", "lanplus", "-H", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "admin", "-P", solPassword, "-N", "5", "-R", "4"}
}

// startSOL runs Debian's ipmitool sol activate against port.
func startSOL(t *testing.T, tool string, port int) *solClient {
	t.Helper()
	c := &solClient{cmd: exec.CommandContext(t.Context(), tool, append(ipmitoolArgs(port), "sol", "activate")...),
		grew: make(chan struct{}, 1), exit: make(chan error, 1)}
	c.cmd.Stdout, c.cmd.Stderr = c, c
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exit <- c.cmd.Wait() }()
	t.Cleanup(func() { _ = c.stdin.Close() })
	return c
}

// until waits for the output to hold want, then forgets what it read.
func (c *solClient) until(t *testing.T, want string) string {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		c.mu.Lock()
		got := c.out.String()
		if i := strings.Index(got, want); i >= 0 {
			c.out.Reset()
			c.out.WriteString(got[i+len(want):])
			c.mu.Unlock()
			return got[:i+len(want)]
		}
		c.mu.Unlock()
		select {
		case <-c.grew:
		case err := <-c.exit:
			c.exit <- err
			select {
			case <-c.grew:
				continue // it wrote before it ended
			default:
			}
			t.Fatalf("ipmitool ended (%v) with %q, want %q", err, got, want)
		case <-timer.C:
			t.Fatalf("ipmitool output %q, want %q", got, want)
		}
	}
}

// testIPMISOL: Debian's ipmitool 1.8.19 `sol activate` (stdin piped)
// reaches the VM's serial console through the IPMI endpoint's SOL, the
// console stream, kube-apiserver, the real virt-api and the simulated
// virt-handler: it sees the guest's login prompt and its own input
// echoed. While it holds the VM's stream, the SSH console is refused "in
// use" and a second sol activate "payload already active" (one stream per
// VM across IPMI and SSH); "~." leaves and frees the stream.
func testIPMISOL(t *testing.T, opener *console.Opener, key system.Key, sshBin, sshPort string) {
	tool, err := exec.LookPath("ipmitool")
	if err != nil {
		t.Fatalf("Debian's ipmitool is needed (.ci/run installs it): %v", err)
	}
	start := time.Now()
	port := startIPMI(t.Context(), t, opener, key)
	c := startSOL(t, tool, port)
	// ipmitool's stdout is a pipe, so its banner waits in stdio's buffer
	// until the guest's first output flushes it: the open stream is the
	// event that says the payload is active.
	testutil.Eventually(t, "the SOL payload's console stream open", guard, 20*time.Millisecond, func(context.Context) error {
		if opener.OpenCount() != 1 {
			return errors.New("no console open")
		}
		return nil
	})
	typeIn(t, c.stdin, "\r")
	c.until(t, "[SOL Session operational.  Use ~? for help]")
	c.until(t, "\r\n"+sim.GuestLoginPrompt(key.Name))
	typeIn(t, c.stdin, "root\r")
	c.until(t, "root\r\n"+sim.GuestLoginPrompt(key.Name))
	t.Logf("TIMING sol activate to the echo: %s", time.Since(start).Round(time.Millisecond))

	t.Run("SSHRefusedWhileIPMIHoldsTheStream", func(t *testing.T) {
		cmd, _, out := startSSH(t, sshBin, sshPort, "admin", key.ID())
		err := waitExit(cmd)
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.stderr.String(), "the console of "+key.ID()+" is in use") {
			t.Errorf("ssh while SOL is active: %v, stderr %q; want exit 1 and in use", err, out.stderr.String())
		}
	})
	t.Run("SecondActivationRefused", func(t *testing.T) {
		out, err := exec.CommandContext(t.Context(), tool, append(ipmitoolArgs(port), "sol", "activate")...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Info: SOL payload already active on another session") {
			t.Errorf("second sol activate: %v:\n%s", err, out)
		}
	})
	typeIn(t, c.stdin, "~.")
	c.until(t, "[terminated ipmitool]")
	select {
	case err := <-c.exit:
		if err != nil {
			t.Errorf("ipmitool after ~.: %v\n%s", err, c.output())
		}
	case <-time.After(guard):
		t.Fatal("ipmitool did not end after ~.")
	}
	if n := opener.OpenCount(); n != 0 {
		t.Errorf("%d consoles open after ~.", n)
	}
	t.Logf("TIMING IPMI SOL scenario: %s", time.Since(start).Round(time.Millisecond))
}
