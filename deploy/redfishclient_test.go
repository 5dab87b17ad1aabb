package deploy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// waitHTTPOK polls url until it answers 200 (10 s at most).
func waitHTTPOK(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v %v", url, resp, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// client speaks Redfish with Basic auth, or a session token once set.
type client struct {
	base  string
	token string
}

func (c *client) do(t *testing.T, method, path string, body any) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, c.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	} else {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp, out
}

// must fails the test unless the request succeeds (2xx).
func (c *client) must(t *testing.T, method, path string, body any) {
	t.Helper()
	resp, out := c.do(t, method, path, body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s\n%s", method, path, resp.Status, out)
	}
}

func (c *client) get(t *testing.T, path string, into any) {
	t.Helper()
	resp, out := c.do(t, http.MethodGet, path, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", path, resp.Status, out)
	}
	if err := json.Unmarshal(out, into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// login opens a session and returns its token and URI.
func (c *client) login(t *testing.T) (token, location string) {
	t.Helper()
	resp, out := c.do(t, http.MethodPost, "/redfish/v1/SessionService/Sessions", map[string]any{"UserName": user, "Password": password})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("login: %s\n%s", resp.Status, out)
	}
	token, location = resp.Header.Get("X-Auth-Token"), resp.Header.Get("Location")
	if token == "" || !strings.HasPrefix(location, "/redfish/v1/SessionService/Sessions/") {
		t.Fatalf("login: token %q, Location %q", token, location)
	}
	return token, location
}
