package redfish

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// Config configures the service.
type Config struct {
	// ServiceUUID is the service root's UUID; stable across restarts and
	// identical on every replica.
	ServiceUUID string
	// Vendor is the service root's Vendor. It must stay neutral: Ironic
	// switches behaviour on "Dell", "Supermicro", "ami", "asrockrack",
	// "redfish_compatible".
	Vendor string
	// Version is the bridge's version, shown as firmware versions.
	Version string
	// Logger receives one line per request (successful reads at Debug,
	// errors and writes at Info), and is the request's logger in its context
	// (logctx) with the request id; nil: the logger the request's context
	// carries (the server's BaseContext), else the root logger.
	Logger *slog.Logger
	// RequestTimeout bounds the backend calls of one request (default 30 s,
	// well within the 60 s sushy waits for an answer).
	RequestTimeout time.Duration
	// Observe, if set, is called once per request with the method (as the
	// client sent it: any string), the matched route template (e.g.
	// /redfish/v1/Systems/:id; "" when the path matched no route, so that
	// the routes are a closed set), the status code and the duration: the
	// metrics hook.
	Observe func(method, route string, status int, d time.Duration)
	// UserWrites is each user's share of the apiserver budget for writes
	// (fairshare.go); the zero value does not limit.
	UserWrites WriteShare
	// Reads is how reads share the server (readshare.go); the zero value
	// is the defaults.
	Reads ReadShare
	// Authenticated, if set, is called with the request's context and the
	// user each time a request authenticated (a session token or Basic
	// credentials accepted, a login succeeded): the hook by which the
	// server's connection limit counts a connection against its user's
	// share, not its address's.
	Authenticated func(ctx context.Context, user string)
	// Now is the clock of the times the service shows (a LogService's
	// DateTime); nil: time.Now.
	Now func() time.Time
}

// Server holds the handlers.
type Server struct {
	cfg     Config
	b       Backends
	members memberBodies
	// systemBodies are the kept ComputerSystem bodies (systembodies.go).
	systemBodies systemBodies
	// allow is the Allow header value of each route template.
	allow map[string][]string
	// writes are the users' write shares (nil: no limit).
	writes *writeShares
	// readShares schedules the reads (nil: no limit).
	readShares *readShares
	// echo and reads (each GET route's handler by template) run the
	// in-process GETs of an $expand (expand.go).
	echo  *echo.Echo
	reads map[string]route
	// streamed are the route templates of streams, served outside the
	// request timeout ([Server.handleStream]).
	streamed map[string]bool
	// resources are what the service serves (resources.go); servedTypes
	// their @odata.type namespaces, sorted.
	resources   []resource
	servedTypes []string
}

// New returns the Redfish service as an echo instance (an http.Handler).
// The caller wires TLS and timeouts (the server answers well within sushy's
// 60 s read timeout).
func New(cfg Config, b Backends) (*echo.Echo, error) {
	_, e, err := newServer(cfg, b)
	return e, err
}

// newServer is [New] with the Server behind the handler.
func newServer(cfg Config, b Backends) (*Server, *echo.Echo, error) {
	if !b.complete() {
		return nil, nil, errors.New("redfish: every backend is required")
	}
	if cfg.ServiceUUID == "" {
		return nil, nil, errors.New("redfish: ServiceUUID is required")
	}
	if cfg.Vendor == "" {
		cfg.Vendor = "redfish-bridge"
	}
	lower := strings.ToLower(cfg.Vendor)
	for _, bad := range []string{"dell", "supermicro", "ami", "asrockrack", "redfish_compatible"} {
		if strings.Contains(lower, bad) {
			return nil, nil, errors.New("redfish: Vendor must not contain " + bad + ": Ironic changes behaviour on it")
		}
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	e := echo.New()
	s := &Server{cfg: cfg, b: b, writes: newWriteShares(cfg.UserWrites),
		readShares: newReadShares(cfg.Reads), echo: e, reads: map[string]route{},
		streamed: map[string]bool{}}
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(s.protocol, limitBody)
	s.resources = s.resourceList()
	s.servedTypes = servedTypes(s.resources)
	s.routes(e)
	s.allow = allowedMethods(e.Routes())
	return s, e, nil
}

// handle registers endpoint ep, with and without a trailing slash (never
// redirecting), adding HEAD for GET. Unless public, the caller must be
// authenticated, before anything else about the request is judged (the
// query string, [checkQuery], after authentication, so an unauthenticated
// caller learns nothing but 401), a read waits for the caller's read
// share, and a write is refused to a ReadOnly caller (unless ep is
// [forReadOnly]) before it draws on the caller's write share. A public GET
// with $expand is authenticated too: what it expands is not public.
func (s *Server) handle(e *echo.Echo, ep endpoint) {
	method, path, h := ep.method, ep.path, ep.h
	if method == http.MethodGet {
		s.reads[path] = route{h: h, public: ep.public}
		h = s.expandQuery(h)
	}
	h = checkQuery(h)
	if method == http.MethodGet {
		h = s.shareReads(h)
	}
	switch {
	case !ep.public:
		if method != http.MethodGet {
			h = s.limitWrites(h)
			if !ep.readOnlyToo {
				h = refuseReadOnly(h)
			}
		}
		h = s.authenticated(h)
	case method == http.MethodGet:
		h = s.authenticatedToExpand(h)
	}
	methods := []string{method}
	if method == http.MethodGet {
		methods = append(methods, http.MethodHead)
	}
	for _, m := range methods {
		e.Add(m, path, h)
		if !strings.HasSuffix(path, "/") {
			e.Add(m, path+"/", h)
		}
	}
}
