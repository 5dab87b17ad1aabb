package vncconsole

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/manager"
)

// PathPrefix is where the console is served on the bridge's HTTPS port,
// beside /redfish: the page of System id at /console/<id>, its WebSocket
// at /console/<id>/vnc, the page's own files under /console/app/ and
// noVNC's under /console/novnc/.
const PathPrefix = "/console/"

//go:embed page
var page embed.FS

// securityHeaders fit a page that holds a console: scripts only from the
// bridge (no inline script), never framed, never cached, no referrer.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
	"Cache-Control":          "no-store",
	"X-Content-Type-Options": "nosniff",
	"X-Frame-Options":        "DENY",
	"Referrer-Policy":        "no-referrer",
}

// Console is the graphical console: its page, noVNC's files and the
// console WebSocket ([Handler]), and what the Redfish Manager needs of it
// (redfish.Consoles).
type Console struct {
	cfg     Config
	tokens  *Tokens
	handler *Handler
	files   http.Handler // the page's own files
	novnc   http.Handler // noVNC's core/ and vendor/
	// missing is why the console is not served although enabled (noVNC
	// not installed); nil when it is served or disabled.
	missing error
}

// New returns the console; key signs its tokens (the same on every
// replica). When noVNC is not installed at cfg.NoVNCDir the console is
// not served (the Managers say ServiceEnabled false, the page answers 503
// naming the package, [Add]'s part logs it once) and the rest of the
// bridge runs: a missing web client must not take the BMC down.
func New(cfg Config, key []byte, screens Screens, sessions Sessions) (*Console, error) {
	cfg = cfg.withDefaults()
	tokens, err := NewTokens(key, 0, nil)
	if err != nil {
		return nil, err
	}
	var missing error
	if _, err := os.Stat(cfg.NoVNCDir + "/core/rfb.js"); !cfg.Disabled && err != nil {
		missing = fmt.Errorf("noVNC not found in %s (Debian package novnc; flag --graphical-console-novnc-dir): %w", cfg.NoVNCDir, err)
	}
	sub, err := fs.Sub(page, "page")
	if err != nil {
		return nil, fmt.Errorf("console page files: %w", err)
	}
	return &Console{
		cfg: cfg, tokens: tokens, handler: NewHandler(cfg, tokens, screens, sessions),
		files:   http.StripPrefix(PathPrefix+"app/", http.FileServerFS(sub)),
		novnc:   http.StripPrefix(PathPrefix+"novnc/", http.FileServerFS(os.DirFS(cfg.NoVNCDir))),
		missing: missing,
	}, nil
}

// Missing is why an enabled console is not served (noVNC not installed);
// nil when it is served or disabled.
func (c *Console) Missing() error { return c.missing }

// GraphicalConsole says whether the console is served and how many
// consoles of one System may be open.
func (c *Console) GraphicalConsole() (bool, int) {
	return !c.cfg.Disabled && c.missing == nil, c.cfg.MaxSessionsPerSystem
}

// PageURI is the console page of System id.
func (c *Console) PageURI(id string) string { return PathPrefix + id }

// Issue returns a one-time token for a console of System id.
func (c *Console) Issue(session, user, id string, viewOnly bool) (string, error) {
	return c.tokens.Issue(Grant{Session: session, User: user, System: id, ViewOnly: viewOnly})
}

// SessionEnded ends the open consoles of a logged-out session.
func (c *Console) SessionEnded(session string) { c.handler.SessionEnded(session) }

// Open is the number of open consoles.
func (c *Console) Open() int { return c.handler.Open() }

// ServeHTTP serves everything under [PathPrefix]; only GET.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	rest := strings.TrimPrefix(r.URL.Path, PathPrefix)
	switch {
	case c.missing != nil && !c.cfg.Disabled && rest != r.URL.Path:
		http.Error(w, "graphical console not served: "+c.missing.Error(), http.StatusServiceUnavailable)
	case c.cfg.Disabled || rest == r.URL.Path || path.Clean(r.URL.Path) != r.URL.Path: // no dot segments: what is served is what the prefix says
		http.NotFound(w, r)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case strings.HasPrefix(rest, "app/"):
		c.files.ServeHTTP(w, r)
	case strings.HasPrefix(rest, "novnc/core/"), strings.HasPrefix(rest, "novnc/vendor/"):
		c.novnc.ServeHTTP(w, r)
	case strings.HasSuffix(rest, "/vnc") && strings.Count(rest, "/") == 1:
		c.handler.ServeVNC(w, r, strings.TrimSuffix(rest, "/vnc"))
	case rest != "" && !strings.Contains(rest, "/"):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.ServeFileFS(w, r, page, "page/console.html")
	default:
		http.NotFound(w, r)
	}
}

// Add adds console's part to mgr's Servers group: when the bridge stops it
// ends every open console (an HTTP server's shutdown leaves upgraded
// connections alone), each with its audit line.
func Add(mgr *manager.Manager, console *Console) error {
	return mgr.Add(manager.PartFunc(func(ctx context.Context) error {
		if err := console.Missing(); err != nil {
			logctx.From(ctx).WarnContext(ctx, "graphical console not served", "error", err)
		}
		<-ctx.Done()
		console.handler.endAll(ErrShutdown)
		return nil
	}), manager.Servers)
}
