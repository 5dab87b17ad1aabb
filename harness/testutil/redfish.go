package testutil

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Redfish is a test's Redfish client: Basic auth as User/Password, or the
// session Token when set, JSON request bodies, the whole answer read.
type Redfish struct {
	// Base is the service's scheme and address, e.g. https://127.0.0.1:8443.
	Base           string
	User, Password string
	Token          string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
}

// Response is one answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Insecure is an HTTP client (30 s per request) for a service with a
// self-signed certificate (the demo's): TLS is not what such a test checks.
func Insecure() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the test's own self-signed certificate
	}}
}

// Do sends method path under the test's context; body is nil (none), a
// string or []byte (sent as is) or a value sent as JSON. A transport error
// fails the test.
func (c Redfish) Do(t testing.TB, method, path string, body any) Response {
	t.Helper()
	return c.DoContext(t.Context(), t, method, path, body)
}

// DoContext is [Redfish.Do] under ctx.
func (c Redfish) DoContext(ctx context.Context, t testing.TB, method, path string, body any) Response {
	t.Helper()
	r, err := c.Send(ctx, method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Send is [Redfish.DoContext] returning the error instead of failing a
// test (a service still starting refuses connections).
func (c Redfish) Send(ctx context.Context, method, path string, body any) (Response, error) {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return Response{}, fmt.Errorf("%s %s: encode body: %w", method, path, err)
		}
	}
	var rd io.Reader
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case c.Token != "":
		req.Header.Set("X-Auth-Token", c.Token)
	case c.User != "":
		req.SetBasicAuth(c.User, c.Password)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: out}, nil
}

// JSON decodes the body into a map; an empty body is nil.
func (r Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	if len(bytes.TrimSpace(r.Body)) == 0 {
		return nil
	}
	var out map[string]any
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("decode %q: %v", r.Body, err)
	}
	return out
}

// BaseMessagePrefix is the Base registry's MessageId prefix the bridge
// answers with (redfish's baseRegistryID and a dot).
const BaseMessagePrefix = "Base.1.9.3."

// Refusal is the first message of a Redfish error answer, as a client
// reads it: the status, the MessageId without BaseMessagePrefix, its
// MessageArgs and RelatedProperties.
type Refusal struct {
	Status  int
	ID      string
	Args    []string
	Related []string
}

// ReadRefusal decodes the first message of an error answer's body and its
// Resolution; a body that is not one fails the test.
func ReadRefusal(t testing.TB, status int, body []byte) (Refusal, string) {
	t.Helper()
	var e struct {
		Error struct {
			Infos []struct {
				MessageID  string   `json:"MessageId"`
				Args       []string `json:"MessageArgs"`
				Related    []string `json:"RelatedProperties"`
				Resolution string
			} `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || len(e.Error.Infos) == 0 {
		t.Fatalf("status %d, not an error body %q: %v", status, body, err)
	}
	m := e.Error.Infos[0]
	return Refusal{Status: status, ID: strings.TrimPrefix(m.MessageID, BaseMessagePrefix), Args: m.Args, Related: m.Related}, m.Resolution
}
