package ironic

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
)

// consoleScenario (Ironic 39's ipmitool-socat console on a redfish node,
// as an operator enables it with `baremetal node console enable`): the
// node is driven over Redfish and names the bridge's IPMI endpoint of its
// VM in its ipmi_* driver_info; with the VM running, enabling the console
// makes the conductor run socat on the TCP port it reports, and a client
// of that port reaches the guest's serial port (its login prompt and its
// echo) through the conductor's ipmitool, the bridge's SOL and KubeVirt's
// virt-api; disabling it closes the port.
func consoleScenario(t *testing.T, s *suite, v crds.Variant) {
	env := s.envs[v]
	port := s.ipmiPorts[v] + ipmiPortConsole
	n := s.enroll(t, v, vmConsole, "ramdisk", map[string]any{
		"ipmi_address":  "127.0.0.1",
		"ipmi_port":     port,
		"ipmi_username": env.User,
		"ipmi_password": ipmiPassword,
	})
	n.annotateIPMIPort(t, port)
	n.step(t, "console_interface ipmitool-socat", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid,
			map[string]any{"op": "replace", "path": "/console_interface", "value": "ipmitool-socat"}); err != nil {
			t.Fatalf("set the console interface: %v", err)
		}
	})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "power on", func() {
		n.power(t, "power on", "power on")
		n.waitVMI(t, "VMI Running after power on", running)
	})
	var addr string
	n.step(t, "enable the console", func() {
		if err := s.api.SetConsole(t.Context(), n.uuid, true); err != nil {
			t.Fatalf("enable the console: %v", err)
		}
		con := n.waitConsole(t, true)
		if con.Info == nil || con.Info.Type != "socat" {
			t.Fatalf("console enabled with %+v, want type socat", con.Info)
		}
		u, err := url.Parse(con.Info.URL)
		if err != nil || u.Scheme != "tcp" || u.Port() == "" {
			t.Fatalf("console url %q, want tcp://host:port (%v)", con.Info.URL, err)
		}
		addr = u.Host
	})
	n.step(t, "the guest's prompt and echo through the console's port", func() {
		c := dialConsole(t, addr)
		c.diag = func() string { return s.conductorLog("socat", 10) + "\n" + s.conductorLog("sol ", 10) }
		defer func() { _ = c.Close() }()
		prompt := sim.GuestLoginPrompt(n.key.Name)
		c.send(t, "\r")
		c.readUntil(t, "\n"+prompt)
		c.send(t, "root\r")
		c.readUntil(t, "root\n"+prompt)
	})
	n.step(t, "disable the console", func() {
		if err := s.api.SetConsole(t.Context(), n.uuid, false); err != nil {
			t.Fatalf("disable the console: %v", err)
		}
		n.waitConsole(t, false)
		// socat is stopped before the conductor reports the console
		// disabled: nothing listens on the port any more.
		if c, err := net.DialTimeout("tcp", addr, 10*time.Second); err == nil {
			_ = c.Close()
			t.Errorf("the console's port %s still accepts connections after disable", addr)
		} else if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial the disabled console's port %s: %v, want connection refused", addr, err)
		}
	})
	n.step(t, "power off", func() {
		n.power(t, "power off", "power off")
		n.waitVMI(t, "VMI gone after power off", func(vmi *unstructured.Unstructured) bool { return vmi == nil })
	})
	n.checkFields(t)
}

// waitConsole polls the node's console until its state is enabled,
// failing after stepTimeout. Each read makes the conductor run ipmitool
// sol deactivate: poll before connecting, never during a session.
func (n *node) waitConsole(t *testing.T, enabled bool) ironicproc.Console {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), stepTimeout)
	defer cancel()
	var last ironicproc.Console
	var lastErr error
	for {
		con, err := n.s.api.Console(ctx, n.uuid)
		if err == nil && con.Enabled == enabled && (!enabled || con.Info != nil) {
			return con
		}
		last, lastErr = con, err
		select {
		case <-ctx.Done():
			t.Fatalf("console enabled %v: not reached: last %+v (%v)\nconductor log:\n%s", enabled, last, lastErr, n.s.conductorLog(n.uuid, 20))
		case <-time.After(time.Second):
		}
	}
}

// consoleConn is a client of the socat port: what it read so far.
type consoleConn struct {
	net.Conn
	r    *bufio.Reader
	read strings.Builder
	diag func() string // what the conductor logged of its socat and ipmitool
}

// dialConsole connects to the console's port; socat listens once the
// conductor has started it, which it reports before the listen may be up,
// so a refused connection is tried again within stepTimeout.
func dialConsole(t *testing.T, addr string) *consoleConn {
	t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err == nil {
			return &consoleConn{Conn: c, r: bufio.NewReader(c), diag: func() string { return "" }}
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(deadline) {
			t.Fatalf("connect to the console at %s: %v", addr, err)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *consoleConn) send(t *testing.T, s string) {
	t.Helper()
	if _, err := c.Write([]byte(s)); err != nil {
		t.Fatalf("write %q to the console: %v", s, err)
	}
}

// readUntil reads until what was read, carriage returns dropped (the
// guest's "\r\n" may pass a terminal's output processing on the way),
// ends with want; stepTimeout bounds a failure.
func (c *consoleConn) readUntil(t *testing.T, want string) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(stepTimeout)); err != nil {
		t.Fatal(err)
	}
	for !strings.HasSuffix(strings.ReplaceAll(c.read.String(), "\r", ""), want) {
		b, err := c.r.ReadByte()
		if err != nil {
			t.Fatalf("console: %v before %q; read so far: %q\nconductor log:\n%s", err, want, c.read.String(), c.diag())
		}
		c.read.WriteByte(b)
	}
}
