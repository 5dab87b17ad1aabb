package console_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

const ns = "console-test"

// guard bounds a wait for the guest: a failure guard, never what decides
// a result.
const guard = 2 * time.Minute

// systems is the inventory's view the test gives the Opener: every VM of
// ns exists, with these labels.
type systems map[string]map[string]string

func (s systems) Labels(_ context.Context, key system.Key) (map[string]string, bool) {
	l, ok := s[key.Name]
	return l, ok && key.Namespace == ns
}

// auditLog collects the audit lines.
type auditLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (a *auditLog) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.buf.Write(p)
}

func (a *auditLog) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.buf.String()
}

// TestConsole opens consoles as the bridge's RBAC-limited identity (the
// chart's grants) through kube-apiserver, the real virt-api v1.9.0 and the
// simulated virt-handler (harness/sim): the guest's boot log and prompt,
// its echo, the one-stream-per-VM rule, the per-user limit, ReadOnly and
// scoped-away users, a stopped VM, the idle timeout and the audit lines.
func TestConsole(t *testing.T) {
	c := testcluster.ForTestWith(t, testcluster.Options{VirtAPI: true})
	if err := c.CreateNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	sim.RunForTest(t, c.VirtHandler, sim.Options{Namespaces: []string{ns}})
	dyn := dynamic.NewForConfigOrDie(c.Admin)
	for _, vm := range []struct{ name, run string }{{"a", "Always"}, {"b", "Always"}, {"off", "Halted"}} {
		if _, err := dyn.Resource(sim.VMResource).Namespace(ns).Create(t.Context(), testutil.VM(ns, vm.name, vm.run), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b"} {
		sim.VMIRunning(t, dyn, ns, name)
	}
	all := systems{"a": nil, "b": nil, "off": nil}
	admin := console.User{Name: "admin", Scope: auth.Scope{Namespaces: []string{auth.AllNamespaces}}}
	audit := &auditLog{}
	actx := logctx.Into(t.Context(), slog.New(slog.NewTextHandler(audit, nil)))
	cfg := console.DefaultConfig()
	cfg.MaxPerUser = 1
	o, err := console.New(c.Bridge, all, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := system.Key{Namespace: ns, Name: "a"}

	st, err := o.Open(actx, admin, a)
	if err != nil {
		t.Fatalf("open the console of %s: %v", a, err)
	}
	typeIn(t, st, "\r")
	if got := readUntil(t, st, "\r\n"+sim.GuestLoginPrompt("a")); !strings.Contains(got, sim.GuestBootBanner(ns, "a")) {
		t.Errorf("read %q: no boot log naming the VM", got)
	}
	typeIn(t, st, "root\r")
	readUntil(t, st, "root\r\n"+sim.GuestLoginPrompt("a"))

	t.Run("SecondOpenerRefused", func(t *testing.T) {
		other := console.User{Name: "other", Scope: admin.Scope}
		if _, err := o.Open(actx, other, a); !errors.Is(err, console.ErrActive) {
			t.Errorf("second opener of %s: %v, want %v", a, err, console.ErrActive)
		}
	})
	t.Run("PerUserLimit", func(t *testing.T) {
		if _, err := o.Open(actx, admin, system.Key{Namespace: ns, Name: "b"}); !errors.Is(err, console.ErrLimit) {
			t.Errorf("admin's second console (limit 1): %v, want %v", err, console.ErrLimit)
		}
	})
	t.Run("ReadOnly", func(t *testing.T) {
		ro := console.User{Name: "ro", Scope: admin.Scope, ReadOnly: true}
		if _, err := o.Open(actx, ro, system.Key{Namespace: ns, Name: "b"}); !errors.Is(err, console.ErrReadOnly) {
			t.Errorf("ReadOnly user: %v, want %v", err, console.ErrReadOnly)
		}
	})
	t.Run("ScopedAway", func(t *testing.T) {
		away := console.User{Name: "away", Scope: auth.Scope{Namespaces: []string{"elsewhere"}}}
		if _, err := o.Open(actx, away, system.Key{Namespace: ns, Name: "b"}); !errors.Is(err, console.ErrNotFound) {
			t.Errorf("user scoped away: %v, want %v", err, console.ErrNotFound)
		}
	})

	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	<-st.Done()
	if got := audit.String(); !strings.Contains(got, `msg="console opened" user=admin system=console-test/a`) ||
		!strings.Contains(got, `msg="console closed" user=admin system=console-test/a bytesToGuest=6 bytesFromGuest=`) {
		t.Errorf("audit lines:\n%s\nwant an open and a close line with bytes", got)
	}
	if n := o.OpenCount(); n != 0 {
		t.Errorf("%d consoles counted open after Close", n)
	}

	t.Run("NotRunning", func(t *testing.T) {
		if _, err := o.Open(actx, admin, system.Key{Namespace: ns, Name: "off"}); !errors.Is(err, console.ErrNotRunning) {
			t.Errorf("console of a stopped VM: %v, want %v", err, console.ErrNotRunning)
		}
	})
	t.Run("IdleTimeout", func(t *testing.T) {
		idle := cfg
		idle.IdleTimeout = 300 * time.Millisecond
		oi, err := console.New(c.Bridge, all, idle)
		if err != nil {
			t.Fatal(err)
		}
		st, err := oi.Open(actx, admin, system.Key{Namespace: ns, Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-st.Done():
		case <-time.After(guard):
			t.Fatal("an idle console stayed open")
		}
		if !errors.Is(st.Err(), console.ErrIdle) {
			t.Errorf("idle console ended with %v, want %v", st.Err(), console.ErrIdle)
		}
	})
}

func typeIn(t *testing.T, st console.Stream, s string) {
	t.Helper()
	if _, err := st.Write([]byte(s)); err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
}

// readUntil reads the console until what it read contains want.
func readUntil(t *testing.T, st console.Stream, want string) string {
	t.Helper()
	var got bytes.Buffer
	buf := make([]byte, 4096)
	timer := time.AfterFunc(guard, func() { _ = st.Close() })
	defer timer.Stop()
	for !strings.Contains(got.String(), want) {
		n, err := st.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("console: read %q, then %v; want %q", got.String(), err, want)
		}
	}
	return got.String()
}
