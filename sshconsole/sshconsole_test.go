package sshconsole_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/sshconsole"
	"github.com/redfish-bridge/redfish-bridge/system"
)

const ns = "ssh-console"

// guard bounds a wait on the client: a failure guard, never what decides.
const guard = 2 * time.Minute

// passwords are the test's users: admin (every namespace), away
// (another namespace) and reader (ReadOnly, every namespace), password
// "secret".
type passwords struct{}

func (passwords) Password(_ context.Context, _, name, password string) (auth.Principal, error) {
	if password != "secret" {
		return auth.Principal{}, auth.ErrBadCredentials
	}
	switch name {
	case "admin":
		return auth.Principal{User: name, Scope: auth.Scope{Namespaces: []string{auth.AllNamespaces}}}, nil
	case "away":
		return auth.Principal{User: name, Scope: auth.Scope{Namespaces: []string{"elsewhere"}}}, nil
	case "reader":
		return auth.Principal{User: name, Scope: auth.Scope{Namespaces: []string{auth.AllNamespaces}}, ReadOnly: true}, nil
	}
	return auth.Principal{}, auth.ErrBadCredentials
}

type vms struct{}

func (vms) Labels(_ context.Context, key system.Key) (map[string]string, bool) {
	return nil, key.Namespace == ns
}

// TestSSHConsole: Debian's OpenSSH client (password fed through
// SSH_ASKPASS) reaches a VM's serial console through the SSH console, the
// console stream, kube-apiserver, the real virt-api and the simulated
// virt-handler: it sees the guest's login prompt, gets its input echoed,
// and leaves with "~."; a user scoped away is told the System does not
// exist; a ReadOnly user is refused (docs/reliability.md row 217). The
// same cluster serves the IPMI Serial-over-LAN scenario (testIPMISOL),
// which shares the SSH console's opener.
func TestSSHConsole(t *testing.T) {
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		t.Fatalf("OpenSSH's client is needed (.ci/run installs openssh-client): %v", err)
	}
	c := testcluster.ForTestWith(t, testcluster.Options{VirtAPI: true})
	if err := c.CreateNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	sim.RunForTest(t, c.VirtHandler, sim.Options{Namespaces: []string{ns}})
	dyn := dynamic.NewForConfigOrDie(c.Admin)
	if _, err := dyn.Resource(sim.VMResource).Namespace(ns).Create(t.Context(), testutil.VM(ns, "web", "Always"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sim.VMIRunning(t, dyn, ns, "web")

	opener, err := console.New(c.Bridge, vms{}, console.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	// The console as the bridge runs it: a part of the manager, its host
	// key read from the file --ssh-console-host-key names.
	keyFile := writeHostKey(t)
	ctx, cancel := context.WithCancel(t.Context())
	mgr := manager.New(manager.Options{})
	part, err := sshconsole.Add(mgr, sshconsole.Config{Listen: "127.0.0.1:0", HostKeyFile: keyFile}, passwords{}, opener)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Serve(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := mgr.Wait(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	_, port, err := net.SplitHostPort(part.Addr())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("LoginPromptEchoEscape", func(t *testing.T) {
		cmd, stdin, out := startSSH(t, sshBin, port, "admin", ns+".web")
		typeIn(t, stdin, "\r")
		if got := out.until(t, "\r\n"+sim.GuestLoginPrompt("web")); !strings.Contains(got, sim.GuestBootBanner(ns, "web")) {
			t.Errorf("read %q: no boot log naming the VM", got)
		}
		typeIn(t, stdin, "root\r")
		out.until(t, "root\r\n"+sim.GuestLoginPrompt("web"))
		typeIn(t, stdin, "~.")
		if err := waitExit(cmd); err != nil {
			t.Errorf("ssh after ~.: %v (stderr %s)", err, out.stderr.String())
		}
		if n := opener.OpenCount(); n != 0 {
			t.Errorf("%d consoles open after ~.", n)
		}
	})
	t.Run("IPMISerialOverLAN", func(t *testing.T) {
		testIPMISOL(t, opener, system.Key{Namespace: ns, Name: "web"}, sshBin, port)
	})
	t.Run("ScopedAway", func(t *testing.T) {
		cmd, _, out := startSSH(t, sshBin, port, "away", ns+".web")
		err := waitExit(cmd)
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.stderr.String(), `no such system "ssh-console.web"`) {
			t.Errorf("scoped-away user: %v, stderr %q; want exit 1 and no such system", err, out.stderr.String())
		}
	})
	t.Run("ReadOnly", func(t *testing.T) {
		cmd, _, out := startSSH(t, sshBin, port, "reader", ns+".web")
		err := waitExit(cmd)
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.stderr.String(), "a ReadOnly user cannot open a console") {
			t.Errorf("ReadOnly user: %v, stderr %q; want exit 1 and a ReadOnly user cannot open a console", err, out.stderr.String())
		}
		if n := opener.OpenCount(); n != 0 {
			t.Errorf("%d consoles open after the ReadOnly user's refusal", n)
		}
	})
}

// output collects the client's stdout.
type output struct {
	chunks chan []byte
	buf    bytes.Buffer
	stderr bytes.Buffer
}

func (o *output) until(t *testing.T, want string) string {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for !strings.Contains(o.buf.String(), want) {
		select {
		case b, ok := <-o.chunks:
			if !ok {
				t.Fatalf("ssh output ended: %q (stderr %q), want %q", o.buf.String(), o.stderr.String(), want)
			}
			o.buf.Write(b)
		case <-timer.C:
			t.Fatalf("ssh output %q (stderr %q), want %q", o.buf.String(), o.stderr.String(), want)
		}
	}
	got := o.buf.String()
	o.buf.Reset()
	return got
}

// startSSH runs OpenSSH's client as user, password "secret" through
// SSH_ASKPASS, with command.
func startSSH(t *testing.T, sshBin, port, user, command string) (*exec.Cmd, io.WriteCloser, *output) {
	t.Helper()
	askpass := filepath.Join(t.TempDir(), "askpass")
	if err := os.WriteFile(askpass, []byte("#!/bin/sh\necho secret\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), sshBin, "-T", "-p", port,
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
		"-o", "PreferredAuthentications=password", "-o", "PubkeyAuthentication=no", "-o", "NumberOfPasswordPrompts=1",
		user+"@127.0.0.1", command)
	cmd.Env = append(os.Environ(), "SSH_ASKPASS="+askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=:0")
	out := &output{chunks: make(chan []byte, 64)}
	cmd.Stderr = &out.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(out.chunks)
		for {
			b := make([]byte, 4096)
			n, err := stdout.Read(b)
			if n > 0 {
				out.chunks <- b[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stdin, out
}

func waitExit(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		return err
	case <-time.After(guard):
		return errors.New("ssh did not exit")
	}
}

func typeIn(t *testing.T, w io.Writer, s string) {
	t.Helper()
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
}

// writeHostKey writes a new ed25519 host key, PEM as ssh-keygen writes
// it, and returns its path.
func writeHostKey(t *testing.T) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "host_key")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAddRefusesABadHostKey: a host key file that is not a key fails the
// bridge's start with the file's name, before anything listens.
func TestAddRefusesABadHostKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host_key")
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := sshconsole.Add(manager.New(manager.Options{}), sshconsole.Config{Listen: "127.0.0.1:0", HostKeyFile: path}, passwords{}, nil)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Add with a bad host key: %v, want an error naming %s", err, path)
	}
	if p, err := sshconsole.Add(manager.New(manager.Options{}), sshconsole.Config{}, passwords{}, nil); p != nil || err != nil {
		t.Fatalf("Add without a listen address: %v, %v; want nothing added", p, err)
	}
}
