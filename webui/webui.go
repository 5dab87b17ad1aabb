package webui

import (
	"embed"
	"flag"
	"io/fs"
	"net/http"
	"strings"
)

// Prefix is the path the pages are served under; "/" redirects to it.
const Prefix = "/ui/"

//go:embed static
var static embed.FS

// Config is the web pages' settings.
type Config struct {
	// Disabled serves no pages: "/" and Prefix answer as the Redfish
	// service does (404).
	Disabled bool
}

// RegisterFlags registers c's flags on fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.Disabled, "disable-web-ui", false,
		"serve no web pages (the login and Systems pages under "+Prefix+" on the HTTPS port, beside /redfish)")
}

// ContentSecurityPolicy is every page answer's CSP: scripts, styles and
// requests only from the bridge itself (no inline script or style), the
// screenshot thumbnails as blob: images, never framed.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// hsts is the Strict-Transport-Security of an answer over TLS.
const hsts = "max-age=31536000"

// Serves reports whether the pages answer path: "/" and everything
// under Prefix (and Prefix without its slash).
func Serves(path string) bool {
	return path == "/" || path == strings.TrimSuffix(Prefix, "/") || strings.HasPrefix(path, Prefix)
}

// Handler serves the pages: GET or HEAD of a file under Prefix, "/"
// and Prefix without its slash redirected to Prefix. Every answer carries
// [ContentSecurityPolicy], X-Frame-Options DENY, nosniff, no-referrer,
// Cache-Control no-store and, over TLS, HSTS.
func Handler() http.Handler {
	fileServer := http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.FileServerFS(Static()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if r.TLS != nil {
			h.Set("Strict-Transport-Security", hsts)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !strings.HasPrefix(r.URL.Path, Prefix) {
			http.Redirect(w, r, Prefix, http.StatusFound)
			return
		}
		fileServer.ServeHTTP(w, r)
	})
}

// Static is the pages' files, as served under [Prefix].
func Static() fs.FS {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always holds static/
	}
	return files
}
