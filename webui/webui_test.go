package webui_test

import (
	"crypto/tls"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/webui"
)

// TestHeaders: every answer of the pages (a page, a script, a redirect,
// a refusal) carries the headers a page holding a BMC's session needs;
// HSTS only over TLS.
func TestHeaders(t *testing.T) {
	h := webui.Handler()
	for _, tc := range []struct {
		name, method, path string
		tls                bool
		status             int
		location, ctype    string
	}{
		{name: "root redirects", method: http.MethodGet, path: "/", status: http.StatusFound, location: "/ui/"},
		{name: "prefix without slash redirects", method: http.MethodGet, path: "/ui", status: http.StatusFound, location: "/ui/"},
		{name: "login page", method: http.MethodGet, path: "/ui/", tls: true, status: http.StatusOK, ctype: "text/html"},
		{name: "systems page", method: http.MethodGet, path: "/ui/systems.html", tls: true, status: http.StatusOK, ctype: "text/html"},
		{name: "script", method: http.MethodGet, path: "/ui/redfish.js", status: http.StatusOK, ctype: "text/javascript"},
		{name: "style", method: http.MethodHead, path: "/ui/app.css", status: http.StatusOK, ctype: "text/css"},
		{name: "unknown file", method: http.MethodGet, path: "/ui/nothing.js", status: http.StatusNotFound},
		{name: "a write is refused", method: http.MethodPost, path: "/ui/", tls: true, status: http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("%s %s: %d, want %d", tc.method, tc.path, w.Code, tc.status)
			}
			got := w.Header()
			want := map[string]string{
				"Content-Security-Policy": webui.ContentSecurityPolicy,
				"X-Frame-Options":         "DENY",
				"X-Content-Type-Options":  "nosniff",
				"Cache-Control":           "no-store",
				"Referrer-Policy":         "no-referrer",
			}
			if tc.status == http.StatusNotFound {
				// net/http's error answers drop Cache-Control; a 404
				// of a static file holds nothing to keep.
				delete(want, "Cache-Control")
			}
			if tc.tls {
				want["Strict-Transport-Security"] = "max-age=31536000"
			}
			for k, v := range want {
				if got.Get(k) != v {
					t.Errorf("%s: %q, want %q", k, got.Get(k), v)
				}
			}
			if !tc.tls && got.Get("Strict-Transport-Security") != "" {
				t.Errorf("HSTS over plain HTTP: %q", got.Get("Strict-Transport-Security"))
			}
			if tc.location != "" && got.Get("Location") != tc.location {
				t.Errorf("Location %q, want %q", got.Get("Location"), tc.location)
			}
			if tc.ctype != "" && !strings.HasPrefix(got.Get("Content-Type"), tc.ctype) {
				t.Errorf("Content-Type %q, want %s", got.Get("Content-Type"), tc.ctype)
			}
		})
	}
	if !strings.Contains(webui.ContentSecurityPolicy, "frame-ancestors 'none'") ||
		!strings.Contains(webui.ContentSecurityPolicy, "script-src 'self';") {
		t.Errorf("CSP %q allows framing or scripts from elsewhere", webui.ContentSecurityPolicy)
	}
}

// inline finds what the CSP would block in a page: a script element
// without src, an event handler attribute, a style attribute or element,
// a javascript: URL.
var inline = regexp.MustCompile(`(?is)<script(?:\s[^>]*)?>\s*[^<\s]|<script(?:(?:\s(?:[^s>]|s[^r>])[^>]*)?)>|\son[a-z]+\s*=|\sstyle\s*=|<style|javascript:`)

// TestNoInlineScript: the pages work under the CSP without
// 'unsafe-inline': no inline script, handler or style in any HTML file.
func TestNoInlineScript(t *testing.T) {
	if !inline.MatchString(`<button onclick="x()">`) || !inline.MatchString(`<script>alert(1)</script>`) ||
		inline.MatchString(`<script src="a.js" defer></script>`) {
		t.Fatal("the inline pattern misses what it looks for")
	}
	pages, err := fs.Glob(webui.Static(), "*.html")
	if err != nil || len(pages) < 2 {
		t.Fatalf("pages %v: %v", pages, err)
	}
	for _, p := range pages {
		b, err := fs.ReadFile(webui.Static(), p)
		if err != nil {
			t.Fatal(err)
		}
		if m := inline.Find(b); m != nil {
			t.Errorf("%s holds %q, which the CSP blocks", p, m)
		}
	}
}
