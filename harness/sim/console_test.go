package sim_test

import (
	"bytes"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// consoleGuard bounds a console read that waits for the guest: a failure
// guard, never what decides a result.
const consoleGuard = 2 * time.Minute

// testConsole: virt-api's real console subresource reaches the simulated
// virt-handler: the first connection, after pressing Enter, reads the boot
// log naming the VM and the login prompt, and gets its input echoed; a
// second connection gets the prompt (no second boot log) and, as in
// virt-handler, closes the first. virt-handler's server refuses a client without KubeVirt's client
// certificate.
func (e *env) testConsole(t *testing.T, c *testcluster.Cluster) {
	e.createVM(t, newVM(e.ns, "console", "Always"))
	e.vmiIs(t, "console", "Running", "")

	first := dialConsole(t, c.Admin, e.ns, "console")
	writeConsole(t, first, "\r")
	if got := readUntil(t, first, "\r\n"+sim.GuestLoginPrompt("console")); !strings.Contains(got, sim.GuestBootBanner(e.ns, "console")) {
		t.Errorf("first connection read %q: no boot log naming the VM", got)
	}
	if err := first.WriteMessage(websocket.BinaryMessage, []byte("root\r")); err != nil {
		t.Fatalf("write to the console: %v", err)
	}
	readUntil(t, first, "root\r\n"+sim.GuestLoginPrompt("console"))

	second := dialConsole(t, c.Admin, e.ns, "console")
	writeConsole(t, second, "\r")
	got := readUntil(t, second, sim.GuestLoginPrompt("console"))
	if strings.Contains(got, sim.GuestBootBanner(e.ns, "console")) {
		t.Errorf("second connection saw the boot log again: %q", got)
	}
	_ = first.SetReadDeadline(time.Now().Add(consoleGuard))
	if _, msg, err := first.ReadMessage(); err == nil {
		t.Errorf("first connection still open after a second one: read %q", msg)
	}

	t.Run("NoClientCertificate", func(t *testing.T) {
		ds, err := e.kube.AppsV1().DaemonSets(testcluster.KubeVirtNamespace).Get(t.Context(), testcluster.HandlerDaemonSet, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		port := ds.Spec.Template.Spec.Containers[0].Args[1]
		conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", port), &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			_ = conn.SetDeadline(time.Now().Add(consoleGuard))
			_, err = conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
			if err == nil {
				_, err = conn.Read(make([]byte, 1))
			}
			conn.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "certificate required") {
			t.Errorf("virt-handler's server answered a client without a certificate: %v", err)
		}
	})
}

// dialConsole opens VMI ns/name's console through kube-apiserver and
// virt-api, as cfg.
func dialConsole(t *testing.T, cfg *rest.Config, ns, name string) *websocket.Conn {
	t.Helper()
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := websocket.Dialer{TLSClientConfig: tc, Subprotocols: []string{kubevirt.PlainStreamProtocol}, HandshakeTimeout: consoleGuard}
	url := "wss://" + strings.TrimPrefix(cfg.Host, "https://") + kubevirt.VMISubresourcePath(ns, name, kubevirt.ConsoleSubresource)
	conn, resp, err := d.DialContext(t.Context(), url, http.Header{"Authorization": {"Bearer " + cfg.BearerToken}})
	if err != nil {
		status := ""
		if resp != nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			status = strconv.Itoa(resp.StatusCode) + " " + b.String()
		}
		t.Fatalf("open the console of %s/%s: %v %s", ns, name, err, status)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// writeConsole types s on the console.
func writeConsole(t *testing.T, conn *websocket.Conn, s string) {
	t.Helper()
	if err := conn.WriteMessage(websocket.BinaryMessage, []byte(s)); err != nil {
		t.Fatalf("write %q to the console: %v", s, err)
	}
}

// readUntil reads the console until what it read contains want, and
// returns it.
func readUntil(t *testing.T, conn *websocket.Conn, want string) string {
	t.Helper()
	var got bytes.Buffer
	_ = conn.SetReadDeadline(time.Now().Add(consoleGuard))
	for !strings.Contains(got.String(), want) {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("console: read %q, then %v; want %q", got.String(), err, want)
		}
		got.Write(msg)
	}
	return got.String()
}
