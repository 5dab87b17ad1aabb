package vncconsole

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func newConsole(t *testing.T, cfg Config) *Console {
	t.Helper()
	if cfg.NoVNCDir == "" {
		cfg.NoVNCDir = t.TempDir()
		mkNoVNC(t, cfg.NoVNCDir)
	}
	c, err := New(cfg, bytes.Repeat([]byte{3}, 32), &fleet{}, &revocations{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPageAndFiles: the page, its files and noVNC's core are served with
// the headers of a page holding a console; nothing else of noVNC's
// directory, and nothing when the console is off.
func TestPageAndFiles(t *testing.T) {
	c := newConsole(t, Config{})
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil))
		return rec
	}
	for path, want := range map[string]string{
		"/console/ns1.vm-1":               `src="/console/app/console.js"`,
		"/console/app/console.js":         "import RFB from '/console/novnc/core/rfb.js'",
		"/console/novnc/core/rfb.js":      "export default class RFB",
		"/console/novnc/vendor/pako/x.js": "pako",
	} {
		rec := get(path)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %d %.80q, want %q", path, rec.Code, rec.Body, want)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
		if rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: Cache-Control %q", path, rec.Header().Get("Cache-Control"))
		}
	}
	if ct := get("/console/app/console.js").Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("console.js served as %q: a module script needs JavaScript", ct)
	}
	for _, path := range []string{"/console/novnc/vnc.html", "/console/novnc/core/../vnc.html", "/console/", "/console/a/b/c"} {
		if rec := get(path); rec.Code != http.StatusNotFound && rec.Code != http.StatusMovedPermanently {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
	off := newConsole(t, Config{Disabled: true})
	rec := httptest.NewRecorder()
	off.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/console/ns1.vm-1", nil))
	if enabled, _ := off.GraphicalConsole(); enabled || rec.Code != http.StatusNotFound {
		t.Errorf("disabled console: enabled %v, page %d", enabled, rec.Code)
	}
	// Without noVNC the bridge still starts; the console is not served and
	// says why.
	bare, err := New(Config{NoVNCDir: t.TempDir()}, bytes.Repeat([]byte{3}, 32), &fleet{}, &revocations{})
	if err != nil {
		t.Fatalf("without noVNC: %v, want a console that is not served", err)
	}
	rec = httptest.NewRecorder()
	bare.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/console/ns1.vm-1", nil))
	if enabled, _ := bare.GraphicalConsole(); enabled || rec.Code != http.StatusServiceUnavailable ||
		!strings.Contains(rec.Body.String(), "noVNC not found") || bare.Missing() == nil {
		t.Errorf("without noVNC: enabled %v, page %d %q, Missing %v; want not served, 503 naming noVNC", enabled, rec.Code, rec.Body.String(), bare.Missing())
	}
}

// mkNoVNC lays out the files of noVNC the tests look for.
func mkNoVNC(t *testing.T, dir string) {
	t.Helper()
	for name, body := range map[string]string{
		"core/rfb.js":      "export default class RFB {}",
		"vendor/pako/x.js": "// pako",
		"vnc.html":         "<html>",
	} {
		writeFile(t, dir+"/"+name, body)
	}
}
