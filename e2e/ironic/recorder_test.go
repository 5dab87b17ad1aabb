package ironic

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// recorder is a TLS reverse proxy in front of one bridge that keeps every
// exchange Ironic has with it, so a failing step can print the bridge's
// requests and responses for its node.
type recorder struct {
	srv *httptest.Server
	mu  sync.Mutex
	log []exchange
}

// exchange is one request and its response.
type exchange struct {
	at               time.Time
	method, path     string
	reqBody, resBody string
	status           int
	took             time.Duration
}

// startRecorder proxies to the bridge at target (self-signed HTTPS).
func startRecorder(target string) (*recorder, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("bridge URL %q: %w", target, err)
	}
	r := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = recordingTransport{r: r, next: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, // the demo bridge's self-signed certificate
		MaxIdleConnsPerHost: 32,
	}}
	r.srv = httptest.NewTLSServer(proxy)
	return r, nil
}

// URL is what Ironic's nodes use as redfish_address.
func (r *recorder) URL() string { return r.srv.URL }

func (r *recorder) Close() { r.srv.Close() }

// forSystem is the exchanges whose path names the system (or its manager,
// which has the same id), the last n, one per paragraph.
func (r *recorder) forSystem(id string, n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.log {
		if strings.Contains(e.path, "/"+id) {
			out = append(out, e.String())
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n")
}

// count is how many exchanges matched method and a path containing part.
func (r *recorder) count(method, part string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.log {
		if e.method == method && strings.Contains(e.path, part) {
			n++
		}
	}
	return n
}

// readBursts is how many bursts of GETs of exactly path began after
// since: a GET starts a burst when it comes gap or more after the previous
// GET of path (the conductor's power sync reads a node's System once or a
// few times in a row per cycle, cycles apart).
func (r *recorder) readBursts(path string, since time.Time, gap time.Duration) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	var last time.Time
	for _, e := range r.log {
		if e.method != http.MethodGet || e.path != path {
			continue
		}
		if e.at.After(since) && e.at.Sub(last) >= gap {
			n++
		}
		last = e.at
	}
	return n
}

// writesFor is every exchange but a GET whose path names the system.
func (r *recorder) writesFor(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.log {
		if e.method != http.MethodGet && strings.Contains(e.path, "/"+id) {
			out = append(out, e.String())
		}
	}
	return strings.Join(out, "\n")
}

// lastAt is when the last exchange matching method, a path containing
// part and a request body containing body was sent.
func (r *recorder) lastAt(method, part, body string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.log) - 1; i >= 0; i-- {
		if e := r.log[i]; e.method == method && strings.Contains(e.path, part) && strings.Contains(e.reqBody, body) {
			return e.at, true
		}
	}
	return time.Time{}, false
}

// matching is the exchanges with method, a path containing part and a
// request body containing body, in order.
func (r *recorder) matching(method, part, body string) []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []exchange
	for _, e := range r.log {
		if e.method == method && strings.Contains(e.path, part) && strings.Contains(e.reqBody, body) {
			out = append(out, e)
		}
	}
	return out
}

// firstAfter is when the first exchange with method and a path containing
// part was sent after from.
func (r *recorder) firstAfter(method, part string, from time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.log {
		if e.method == method && strings.Contains(e.path, part) && e.at.After(from) {
			return e.at, true
		}
	}
	return time.Time{}, false
}

// before reports whether an exchange with method and a path ending in
// suffix was sent before at.
func (r *recorder) before(method, suffix string, at time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.log {
		if e.method == method && strings.HasSuffix(e.path, suffix) && e.at.Before(at) {
			return true
		}
	}
	return false
}

func (e exchange) String() string {
	s := fmt.Sprintf("%s %s %s -> %d (%s)", e.at.Format("15:04:05.000"), e.method, e.path, e.status, e.took.Round(time.Millisecond))
	if e.reqBody != "" {
		s += "\n    request:  " + e.reqBody
	}
	if e.method != http.MethodGet || e.status/100 != 2 {
		s += "\n    response: " + e.resBody
	}
	return s
}

type recordingTransport struct {
	r    *recorder
	next http.RoundTripper
}

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	e := exchange{at: time.Now(), method: req.Method, path: req.URL.Path}
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("record request body: %w", err)
		}
		e.reqBody = clip(b)
		if strings.Contains(req.URL.Path, "SessionService") {
			e.reqBody = "(credentials not recorded)"
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := t.next.RoundTrip(req)
	e.took = time.Since(e.at)
	if err != nil {
		e.resBody = "transport error: " + err.Error()
		t.r.add(e)
		return nil, err
	}
	b, rerr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	e.status, e.resBody = resp.StatusCode, clip(b)
	if rerr != nil {
		e.resBody += " (read error: " + rerr.Error() + ")"
	}
	t.r.add(e)
	return resp, nil
}

func (r *recorder) add(e exchange) {
	r.mu.Lock()
	r.log = append(r.log, e)
	r.mu.Unlock()
}

func clip(b []byte) string {
	const limit = 1500
	s := string(bytes.TrimSpace(b))
	if len(s) > limit {
		return s[:limit] + "...(clipped)"
	}
	return s
}
