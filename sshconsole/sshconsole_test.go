package sshconsole_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
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
		ssh := testutil.StartSSH(t, port, "admin", "secret", ns+".web")
		ssh.Type(t, "\r")
		if got := ssh.Until(t, "\r\n"+sim.GuestLoginPrompt("web")); !strings.Contains(got, sim.GuestBootBanner(ns, "web")) {
			t.Errorf("read %q: no boot log naming the VM", got)
		}
		ssh.Type(t, "root\r")
		ssh.Until(t, "root\r\n"+sim.GuestLoginPrompt("web"))
		ssh.Type(t, "~.")
		if err := ssh.Wait(); err != nil {
			t.Errorf("ssh after ~.: %v (stderr %s)", err, ssh.Stderr())
		}
		if n := opener.OpenCount(); n != 0 {
			t.Errorf("%d consoles open after ~.", n)
		}
	})
	t.Run("IPMISerialOverLAN", func(t *testing.T) {
		testIPMISOL(t, opener, system.Key{Namespace: ns, Name: "web"}, port)
	})
	t.Run("ScopedAway", func(t *testing.T) {
		ssh := testutil.StartSSH(t, port, "away", "secret", ns+".web")
		err := ssh.Wait()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(ssh.Stderr(), `no such system "ssh-console.web"`) {
			t.Errorf("scoped-away user: %v, stderr %q; want exit 1 and no such system", err, ssh.Stderr())
		}
	})
	t.Run("ReadOnly", func(t *testing.T) {
		ssh := testutil.StartSSH(t, port, "reader", "secret", ns+".web")
		err := ssh.Wait()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(ssh.Stderr(), "a ReadOnly user cannot open a console") {
			t.Errorf("ReadOnly user: %v, stderr %q; want exit 1 and a ReadOnly user cannot open a console", err, ssh.Stderr())
		}
		if n := opener.OpenCount(); n != 0 {
			t.Errorf("%d consoles open after the ReadOnly user's refusal", n)
		}
	})
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
