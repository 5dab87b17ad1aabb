package service_test

import (
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/service"
)

// TestGraphicalConsoleServed: the bridge started by service.Start serves
// the graphical console on its Redfish port (the page with its headers,
// noVNC, the WebSocket refusing a request without a token).
func TestGraphicalConsoleServed(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	c := testcluster.ForTest(t, crds.Stock)
	ctx := t.Context()
	const ns = "vms"
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := demo.CreateAccounts(ctx, kubernetes.NewForConfigOrDie(c.Admin), c.BridgeNamespace); err != nil {
		t.Fatal(err)
	}
	if err := demo.CreateSampleVMs(ctx, dynamic.NewForConfigOrDie(c.Admin), ns, 1); err != nil {
		t.Fatal(err)
	}
	r, err := service.Start(ctx, service.Config{
		Kube: c.Bridge, Namespaces: []string{ns}, Namespace: c.BridgeNamespace,
		UsersSecret: demo.UsersSecret, SessionKeySecret: demo.SessionKeySecret, RevocationsConfigMap: demo.RevocationsConfigMap,
		Listen: "127.0.0.1:0", ServiceUUID: "0a8c1a52-5e7e-4e0c-9a55-5f1f3a1c2b3e", Version: "test",
		Leader: service.LeaderElection{Identity: "console"},
	})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.Addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp, b.String()
	}
	resp, body := get("/console/" + ns + ".vm-0")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "/console/app/console.js") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("console page: %d %q, CSP %q", resp.StatusCode, body, resp.Header.Get("Content-Security-Policy"))
	}
	if resp, _ := get("/console/novnc/core/rfb.js"); resp.StatusCode != http.StatusOK {
		t.Errorf("noVNC: %d", resp.StatusCode)
	}
	if resp, body := get("/console/" + ns + ".vm-0/vnc"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("console WebSocket without a token: %d %q, want 401", resp.StatusCode, body)
	}
}
