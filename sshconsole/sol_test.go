package sshconsole_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
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
	port, err := testutil.FreeUDPPort()
	if err != nil {
		t.Fatal(err)
	}
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

// testIPMISOL: Debian's ipmitool 1.8.19 `sol activate` (stdin piped)
// reaches the VM's serial console through the IPMI endpoint's SOL, the
// console stream, kube-apiserver, the real virt-api and the simulated
// virt-handler: it sees the guest's login prompt and its own input
// echoed. While it holds the VM's stream, the SSH console is refused "in
// use" and a second sol activate "payload already active" (one stream per
// VM across IPMI and SSH); "~." leaves and frees the stream.
func testIPMISOL(t *testing.T, opener *console.Opener, key system.Key, sshPort string) {
	start := time.Now()
	port := startIPMI(t.Context(), t, opener, key)
	c := testutil.StartSOL(t, port, "admin", solPassword)
	// ipmitool's stdout is a pipe, so its banner waits in stdio's buffer
	// until the guest's first output flushes it: the open stream is the
	// event that says the payload is active.
	testutil.Eventually(t, "the SOL payload's console stream open", guard, 20*time.Millisecond, func(context.Context) error {
		if opener.OpenCount() != 1 {
			return errors.New("no console open")
		}
		return nil
	})
	c.Type(t, "\r")
	c.Take(t, "[SOL Session operational.  Use ~? for help]")
	c.Take(t, "\r\n"+sim.GuestLoginPrompt(key.Name))
	c.Type(t, "root\r")
	c.Take(t, "root\r\n"+sim.GuestLoginPrompt(key.Name))
	t.Logf("TIMING sol activate to the echo: %s", time.Since(start).Round(time.Millisecond))

	t.Run("SSHRefusedWhileIPMIHoldsTheStream", func(t *testing.T) {
		ssh := testutil.StartSSH(t, sshPort, "admin", "secret", key.ID())
		err := ssh.Wait()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(ssh.Stderr(), "the console of "+key.ID()+" is in use") {
			t.Errorf("ssh while SOL is active: %v, stderr %q; want exit 1 and in use", err, ssh.Stderr())
		}
	})
	t.Run("SecondActivationRefused", func(t *testing.T) {
		out, err := testutil.Ipmitool(t, port, "admin", solPassword, nil, "sol", "activate")
		if err == nil || !strings.Contains(out, "Info: SOL payload already active on another session") {
			t.Errorf("second sol activate: %v:\n%s", err, out)
		}
	})
	c.Type(t, "~.")
	c.Take(t, "[terminated ipmitool]")
	if err := c.Wait(t); err != nil {
		t.Errorf("ipmitool after ~.: %v\n%s", err, c.Output())
	}
	if n := opener.OpenCount(); n != 0 {
		t.Errorf("%d consoles open after ~.", n)
	}
	t.Logf("TIMING IPMI SOL scenario: %s", time.Since(start).Round(time.Millisecond))
}
