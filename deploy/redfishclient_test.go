package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// waitHTTPOK polls url until it answers 200 (10 s at most).
func waitHTTPOK(t *testing.T, url string) {
	t.Helper()
	c := testutil.Redfish{}
	testutil.Eventually(t, "GET "+url+" 200", 10*time.Second, 100*time.Millisecond, func(ctx context.Context) error {
		r, err := c.Send(ctx, http.MethodGet, url, nil)
		if err == nil && r.Status != http.StatusOK {
			err = fmt.Errorf("status %d: %s", r.Status, r.Body)
		}
		return err
	})
}

// client speaks Redfish with Basic auth, or a session token once set.
type client struct {
	base  string
	token string
}

func (c *client) do(t *testing.T, method, path string, body any) (testutil.Response, []byte) {
	t.Helper()
	r := testutil.Redfish{Base: c.base, User: user, Password: password, Token: c.token}.Do(t, method, path, body)
	return r, r.Body
}

// must fails the test unless the request succeeds (2xx).
func (c *client) must(t *testing.T, method, path string, body any) {
	t.Helper()
	resp, out := c.do(t, method, path, body)
	if resp.Status/100 != 2 {
		t.Fatalf("%s %s: %d\n%s", method, path, resp.Status, out)
	}
}

func (c *client) get(t *testing.T, path string, into any) {
	t.Helper()
	resp, out := c.do(t, http.MethodGet, path, nil)
	if resp.Status != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, resp.Status, out)
	}
	if err := json.Unmarshal(out, into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// login opens a session and returns its token and URI.
func (c *client) login(t *testing.T) (token, location string) {
	t.Helper()
	resp, out := c.do(t, http.MethodPost, "/redfish/v1/SessionService/Sessions", map[string]any{"UserName": user, "Password": password})
	if resp.Status != http.StatusCreated {
		t.Fatalf("login: %d\n%s", resp.Status, out)
	}
	token, location = resp.Header.Get("X-Auth-Token"), resp.Header.Get("Location")
	if token == "" || !strings.HasPrefix(location, "/redfish/v1/SessionService/Sessions/") {
		t.Fatalf("login: token %q, Location %q", token, location)
	}
	return token, location
}
