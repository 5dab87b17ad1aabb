package reliability

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// startDemo runs a demo with n VMs on CRD variant v for the test.
func startDemo(t *testing.T, v crds.Variant, n int) *demo.Env {
	t.Helper()
	return startDemoWith(t, demo.Options{Variant: v, VMs: n})
}

// startDemoWith runs a demo with opts on a free port, logging warnings.
func startDemoWith(t *testing.T, opts demo.Options) *demo.Env {
	t.Helper()
	opts.Listen = "127.0.0.1:0"
	opts.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	env, err := demo.Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("start demo: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop demo: %v", err)
		}
	})
	return env
}

// client talks to the bridge from a given local address ("" for any).
type client struct {
	base string
	hc   *http.Client
	sent atomic.Int64 // requests made; do runs on several goroutines
}

func newClient(t *testing.T, base, localIP string) *client {
	t.Helper()
	d := &net.Dialer{Timeout: 10 * time.Second}
	if localIP != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(localIP)}
	}
	tr := &http.Transport{
		DialContext: d.DialContext,
		// The demo's certificate is self-signed; TLS is not what is tested.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // test against a self-signed demo
	}
	return &client{base: base, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// auth is how a request authenticates: basic user/password or a token.
type auth struct{ user, password, token string }

type response struct {
	status int
	header http.Header
	body   []byte
}

func (c *client) do(ctx context.Context, t *testing.T, method, path string, a auth, body string) response {
	t.Helper()
	rf := testutil.Redfish{Base: c.base, User: a.user, Password: a.password, Token: a.token, HTTP: c.hc}
	var b any
	if body != "" {
		b = body
	}
	r := rf.DoContext(ctx, t, method, path, b)
	c.sent.Add(1)
	return response{status: r.Status, header: r.Header, body: r.Body}
}

// redfishError checks that r is a Redfish error document and returns its
// first MessageId.
func redfishError(t *testing.T, what string, r response) string {
	t.Helper()
	var doc struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Infos   []struct {
				MessageID string `json:"MessageId"`
			} `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil || doc.Error == nil || doc.Error.Code == "" || len(doc.Error.Infos) == 0 {
		t.Errorf("%s: status %d, not a Redfish error body: %q", what, r.status, r.body)
		return ""
	}
	return doc.Error.Infos[0].MessageID
}
