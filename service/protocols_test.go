package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/service"
	"github.com/redfish-bridge/redfish-bridge/sshconsole"
)

// TestProtocolSwitch: an Administrator's PATCH of a Manager's
// NetworkProtocol through one replica switches the System's IPMI and SSH
// on every replica, without a restart, and a restarted replica keeps it:
// a switched-off System's IPMI port answers nothing (the presence ping is
// refused) on both replicas, and the SSH console refuses its console
// with a clear message; switched on again, the port answers and the SSH
// console no longer refuses.
func TestProtocolSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	e := newEnv(t, crds.Stock)
	ctx := t.Context()
	port := freeUDPPort(t)
	annotate := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, ipmi.PortAnnotation, strconv.Itoa(port))
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Patch(ctx, "vm-0", types.MergePatchType, []byte(annotate), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Two replicas on one machine: each IPMI endpoint binds its own
	// loopback address, on the same port.
	replica := func(id, ipmiAddr string) *bridge {
		return e.startWith(t, id, func(c *service.Config) {
			c.IPMI = ipmi.Config{Address: ipmiAddr, FirstPort: port, LastPort: port}
			c.SSHConsole = sshconsole.Config{Listen: "127.0.0.1:0"}
		})
	}
	ipmiAddr := func(host string) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
	a, b := replica("a", "127.0.0.1"), replica("b", "127.0.0.2")
	const np = "/redfish/v1/Managers/vms.vm-0/NetworkProtocol"
	enabled := func(br *bridge, protocol string) any {
		t.Helper()
		status, body := e.call(t, br, http.MethodGet, np, nil)
		p, _ := body[protocol].(map[string]any)
		if status != http.StatusOK || p == nil {
			t.Fatalf("GET %s: %d %v", np, status, body)
		}
		return p["ProtocolEnabled"]
	}
	patch := func(br *bridge, body string) {
		t.Helper()
		var v map[string]any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		if status, resp := e.call(t, br, http.MethodPatch, np, v); status != http.StatusNoContent {
			t.Fatalf("PATCH %s: %d %v", body, status, resp)
		}
	}
	answers := func(host string) func() bool { return func() bool { return ping(ctx, ipmiAddr(host)) == nil } }
	silent := func(host string) func() bool {
		return func() bool { return errors.Is(ping(ctx, ipmiAddr(host)), syscall.ECONNREFUSED) }
	}
	eventually(t, "replica a's IPMI port answers", answers("127.0.0.1"))
	eventually(t, "replica b's IPMI port answers", answers("127.0.0.2"))

	patch(a, `{"IPMI": {"ProtocolEnabled": false}}`)
	eventually(t, "replica b shows IPMI off", func() bool { return enabled(b, "IPMI") == false })
	eventually(t, "replica b's IPMI port answers nothing", silent("127.0.0.2"))
	eventually(t, "replica a's IPMI port answers nothing", silent("127.0.0.1"))
	if got := enabled(b, "SSH"); got != true {
		t.Errorf("IPMI off: SSH ProtocolEnabled %v", got)
	}

	patch(b, `{"SSH": {"ProtocolEnabled": false}}`)
	eventually(t, "replica a shows SSH off", func() bool { return enabled(a, "SSH") == false })
	if msg, err := sshConsole(ctx, a.SSHConsoleAddr, e.password, "vms.vm-0"); !isExit(err, 1) || !strings.Contains(msg, "the SSH console of vms.vm-0 is switched off") {
		t.Errorf("SSH switched off: %v %q, want exit 1 and the System's console switched off", err, msg)
	}

	// A restarted replica reads the switches from the VM: nothing to wait for.
	a.stop()
	c := replica("c", "127.0.0.1")
	if ipmiOn, sshOn := enabled(c, "IPMI"), enabled(c, "SSH"); ipmiOn != false || sshOn != false {
		t.Errorf("after a restart: IPMI %v, SSH %v, want both off", ipmiOn, sshOn)
	}
	if !silent("127.0.0.1")() {
		t.Errorf("after a restart: the IPMI port of a switched-off System answers")
	}

	patch(c, `{"IPMI": {"ProtocolEnabled": true}, "SSH": {"ProtocolEnabled": true}}`)
	eventually(t, "replica b's IPMI port answers again", answers("127.0.0.2"))
	eventually(t, "replica c's IPMI port answers again", answers("127.0.0.1"))
	eventually(t, "replica b shows SSH on", func() bool { return enabled(b, "SSH") == true })
	// The VM does not run: the console is now asked of KubeVirt, not refused.
	if msg, _ := sshConsole(ctx, b.SSHConsoleAddr, e.password, "vms.vm-0"); strings.Contains(msg, "switched off") {
		t.Errorf("SSH switched on again: %q", msg)
	}
}

// freeUDPPort is a UDP port free on the loopback addresses now.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	var lc net.ListenConfig
	for range 20 {
		c, err := lc.ListenPacket(t.Context(), "udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := c.LocalAddr().(*net.UDPAddr).Port
		_ = c.Close()
		if c2, err := lc.ListenPacket(t.Context(), "udp", net.JoinHostPort("127.0.0.2", strconv.Itoa(port))); err == nil {
			_ = c2.Close()
			return port
		}
	}
	t.Fatal("no UDP port free on 127.0.0.1 and 127.0.0.2")
	return 0
}

// ping sends an RMCP/ASF presence ping to addr and reads the pong: nil
// for a pong, ECONNREFUSED when nothing listens (the ICMP answer).
func ping(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second)) // a failure guard: a pong or a refusal comes at once
	if _, err := c.Write([]byte{0x06, 0x00, 0xFF, 0x06, 0x00, 0x00, 0x11, 0xBE, 0x80, 0x01, 0x00, 0x00}); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if n < 9 || buf[8] != 0x40 {
		return fmt.Errorf("not a pong: % x", buf[:n])
	}
	return nil
}

// sshConsole asks the SSH console at addr for System id's console as the
// admin and returns what it wrote on stderr.
func sshConsole(ctx context.Context, addr, password, id string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	cfg := &ssh.ClientConfig{User: demo.AdminUser, Auth: []ssh.AuthMethod{ssh.Password(password)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey()} // the test's own console, its key made at start
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		return "", err
	}
	client := ssh.NewClient(sc, chans, reqs)
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return "", err
	}
	defer sess.Close()
	var stderr bytes.Buffer
	sess.Stderr = &stderr
	err = sess.Run(id)
	return stderr.String(), err
}

// isExit reports whether err is an SSH exit with status code.
func isExit(err error, code int) bool {
	var ee *ssh.ExitError
	return errors.As(err, &ee) && ee.ExitStatus() == code
}
