package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Client is a small Ironic-like Redfish client over HTTPS with Basic auth.
// Every call is recorded under its operation name.
type Client struct {
	Base, User, Password string
	// Bases, when set, are several replicas' base URLs: each request goes
	// to a random one of them instead of Base.
	Bases []string
	// Close sends Connection: close on every request, as sushy does (a new
	// TLS handshake each time); otherwise connections are kept alive.
	Close bool
	HTTP  *http.Client
	Rec   *Recorder
}

// NewHTTPClient returns a client for the bridge's self-signed certificate
// keeping up to conns idle connections.
func NewHTTPClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 60 * time.Second, // sushy's read timeout
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, // the bench's own self-signed bridge on loopback
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     90 * time.Second,
		},
	}
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Code, e.Body) }

// Do sends method path with body (JSON, nil for none), records the call
// under op (when op is not empty) and decodes a JSON answer into out (may
// be nil).
func (c *Client) Do(ctx context.Context, op, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: encode body: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	base := c.Base
	if len(c.Bases) > 0 {
		base = c.Bases[rand.IntN(len(c.Bases))]
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.SetBasicAuth(c.User, c.Password)
	req.Header.Set("OData-Version", "4.0")
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Close = c.Close
	start := time.Now()
	resp, err := c.HTTP.Do(req)
	var data []byte
	if err == nil {
		data, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
	}
	d := time.Since(start)
	fail := ""
	switch {
	case err != nil:
		fail = "error"
		if errors.Is(err, context.DeadlineExceeded) {
			fail = "timeout"
		}
		err = fmt.Errorf("%s %s: %w", method, path, err)
	case resp.StatusCode >= 300:
		fail = strconv.Itoa(resp.StatusCode)
		err = fmt.Errorf("%s %s: %w", method, path, &StatusError{Code: resp.StatusCode, Body: string(data)})
	}
	if op != "" && c.Rec != nil && ctx.Err() == nil {
		c.Rec.Add(op, d, fail)
	}
	if err != nil {
		return err
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}
