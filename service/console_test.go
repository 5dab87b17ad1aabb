package service_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/service"
)

// TestGraphicalConsoleServed: the bridge started by service.Start serves
// the graphical console on its Redfish port (the page with its headers,
// noVNC, the WebSocket refusing a request without a token).
func TestGraphicalConsoleServed(t *testing.T) {
	c, ns := seededStock(t)
	ctx := t.Context()
	r, err := service.Start(ctx, bridgeConfig(c, c.Bridge, ns, "console"))
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
