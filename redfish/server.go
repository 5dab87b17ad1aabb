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
	// Authenticated, if set, is called with the request's context each
	// time a request authenticated (a session token or Basic credentials
	// accepted, a login succeeded): the hook by which the server's
	// connection limit tells authenticated connections from the others.
	Authenticated func(ctx context.Context)
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
	// echo and reads (each GET route's handler by template) run the
	// in-process GETs of an $expand (expand.go).
	echo  *echo.Echo
	reads map[string]route
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
	if b.Systems == nil || b.Power == nil || b.Boot == nil || b.Media == nil || b.Trust == nil || b.Auth == nil {
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
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	e := echo.New()
	s := &Server{cfg: cfg, b: b, writes: newWriteShares(cfg.UserWrites), echo: e, reads: map[string]route{}}
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(s.protocol, limitBody)
	s.routes(e)
	s.allow = allowedMethods(e.Routes())
	return s, e, nil
}

// handle registers h for method on path, with and without a trailing slash
// (never redirecting), adding HEAD for GET. Unless public, the caller must
// be authenticated, before anything else about the request is judged (the
// query string, [checkQuery], after authentication, so an unauthenticated
// caller learns nothing but 401), and a write draws on the caller's write
// share. A public GET with $expand is authenticated too: what it expands
// is not public.
func (s *Server) handle(e *echo.Echo, method, path string, h echo.HandlerFunc, public bool) {
	if method == http.MethodGet {
		s.reads[path] = route{h: h, public: public}
		h = s.expandQuery(h)
	}
	h = checkQuery(h)
	switch {
	case !public:
		if method != http.MethodGet {
			h = s.limitWrites(h)
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

func (s *Server) routes(e *echo.Echo) {
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	const sys = "/redfish/v1/Systems/:id"
	const mgr = "/redfish/v1/Managers/:id"

	s.handle(e, get, "/redfish", s.getVersions, true)
	s.handle(e, get, "/redfish/v1", s.getServiceRoot, true)
	s.handle(e, get, "/redfish/v1/odata", s.getOData, true)
	s.handle(e, get, "/redfish/v1/$metadata", s.getMetadata, true)

	s.handle(e, get, "/redfish/v1/Systems", s.listSystems, false)
	s.handle(e, get, sys, s.getSystem, false)
	s.handle(e, patch, sys, s.patchSystem, false)
	s.handle(e, post, sys+"/Actions/ComputerSystem.Reset", s.resetSystem, false)
	s.handle(e, get, sys+"/ResetActionInfo", s.getResetActionInfo, false)
	s.handle(e, get, sys+"/Processors", s.listProcessors, false)
	s.handle(e, get, sys+"/Processors/:sub", s.getProcessor, false)
	s.handle(e, get, sys+"/Memory", s.listMemory, false)
	s.handle(e, get, sys+"/BootOptions", s.listBootOptions, false)
	s.handle(e, get, sys+"/BootOptions/:sub", s.getBootOption, false)
	s.handle(e, get, sys+"/Memory/:sub", s.getMemory, false)
	s.handle(e, get, sys+"/EthernetInterfaces", s.listEthernetInterfaces, false)
	s.handle(e, get, sys+"/EthernetInterfaces/:sub", s.getEthernetInterface, false)
	s.handle(e, get, sys+"/SimpleStorage", s.listSimpleStorage, false)
	s.handle(e, get, sys+"/SimpleStorage/:sub", s.getSimpleStorage, false)
	s.handle(e, get, sys+"/Storage", s.listStorage, false)
	s.handle(e, get, sys+"/Storage/:sub", s.getStorage, false)
	s.handle(e, get, sys+"/Storage/:sub/Drives/:drive", s.getDrive, false)
	s.handle(e, get, sys+"/Storage/:sub/Controllers", s.listStorageControllers, false)
	s.handle(e, get, sys+"/Storage/:sub/Controllers/:ctrl", s.getStorageController, false)
	s.handle(e, get, sys+"/Storage/:sub/Volumes", s.listVolumes, false)
	s.handle(e, get, sys+"/Bios", s.getBios, false)
	s.handle(e, get, sys+"/Bios/Settings", s.getBiosSettings, false)
	s.handle(e, patch, sys+"/Bios/Settings", s.patchBiosSettings, false)
	s.handle(e, post, sys+"/Bios/Actions/"+resetBiosAction, s.resetBios, false)
	s.handle(e, get, sys+"/Bios/"+resetBiosActionInfo, s.getResetBiosActionInfo, false)
	s.handle(e, get, sys+"/SecureBoot", s.getSecureBoot, false)
	s.handle(e, patch, sys+"/SecureBoot", s.patchSecureBoot, false)
	s.handle(e, get, sys+"/VirtualMedia", s.listVirtualMedia, false)
	s.handle(e, get, sys+"/VirtualMedia/:slot", s.getVirtualMedia, false)
	s.handle(e, patch, sys+"/VirtualMedia/:slot", s.patchVirtualMedia, false)
	s.handle(e, get, sys+"/VirtualMedia/:slot/Certificates", s.listCertificates, false)
	s.handle(e, post, sys+"/VirtualMedia/:slot/Certificates", s.postCertificate, false)
	s.handle(e, get, sys+"/VirtualMedia/:slot/Certificates/:cert", s.getCertificate, false)
	s.handle(e, del, sys+"/VirtualMedia/:slot/Certificates/:cert", s.deleteCertificate, false)
	s.handle(e, post, sys+"/VirtualMedia/:slot/Actions/VirtualMedia.InsertMedia", s.insertMedia, false)
	s.handle(e, post, sys+"/VirtualMedia/:slot/Actions/VirtualMedia.EjectMedia", s.ejectMedia, false)
	s.handle(e, get, sys+"/VirtualMedia/:slot/"+insertActionInfo, s.getInsertMediaActionInfo, false)
	s.handle(e, get, sys+"/VirtualMedia/:slot/"+ejectActionInfo, s.getEjectMediaActionInfo, false)

	s.handle(e, get, "/redfish/v1/Managers", s.listManagers, false)
	s.handle(e, get, mgr, s.getManager, false)
	s.handle(e, get, mgr+"/NetworkProtocol", s.getNetworkProtocol, false)
	s.handle(e, get, mgr+"/EthernetInterfaces", s.listManagerEthernetInterfaces, false)
	s.handle(e, get, mgr+"/VirtualMedia", s.listVirtualMedia, false)
	s.handle(e, get, mgr+"/VirtualMedia/:slot", s.getVirtualMedia, false)
	s.handle(e, patch, mgr+"/VirtualMedia/:slot", s.patchVirtualMedia, false)
	s.handle(e, get, mgr+"/VirtualMedia/:slot/Certificates", s.listCertificates, false)
	s.handle(e, post, mgr+"/VirtualMedia/:slot/Certificates", s.postCertificate, false)
	s.handle(e, get, mgr+"/VirtualMedia/:slot/Certificates/:cert", s.getCertificate, false)
	s.handle(e, del, mgr+"/VirtualMedia/:slot/Certificates/:cert", s.deleteCertificate, false)
	s.handle(e, post, mgr+"/VirtualMedia/:slot/Actions/VirtualMedia.InsertMedia", s.insertMedia, false)
	s.handle(e, post, mgr+"/VirtualMedia/:slot/Actions/VirtualMedia.EjectMedia", s.ejectMedia, false)
	s.handle(e, get, mgr+"/VirtualMedia/:slot/"+insertActionInfo, s.getInsertMediaActionInfo, false)
	s.handle(e, get, mgr+"/VirtualMedia/:slot/"+ejectActionInfo, s.getEjectMediaActionInfo, false)

	s.handle(e, get, "/redfish/v1/Chassis", s.listChassis, false)
	s.handle(e, get, "/redfish/v1/Chassis/:id", s.getChassis, false)

	s.handle(e, get, "/redfish/v1/SessionService", s.getSessionService, false)
	s.handle(e, get, "/redfish/v1/SessionService/Sessions", s.listSessions, false)
	s.handle(e, post, "/redfish/v1/SessionService/Sessions", s.login, true)
	// Members: where some clients (and the DMTF Protocol Validator) post.
	s.handle(e, post, "/redfish/v1/SessionService/Sessions/Members", s.login, true)
	s.handle(e, get, "/redfish/v1/SessionService/Sessions/:sid", s.getSession, false)
	s.handle(e, del, "/redfish/v1/SessionService/Sessions/:sid", s.logout, false)

	s.handle(e, get, "/redfish/v1/AccountService", s.getAccountService, false)
	s.handle(e, get, "/redfish/v1/AccountService/Accounts", s.listAccounts, false)
	s.handle(e, get, "/redfish/v1/AccountService/Accounts/:user", s.getAccount, false)
	s.handle(e, get, rolesURI, s.listRoles, false)
	s.handle(e, get, rolesURI+"/:role", s.getRole, false)

	s.handle(e, get, "/redfish/v1/TaskService", s.getTaskService, false)
	s.handle(e, get, "/redfish/v1/TaskService/Tasks", s.listTasks, false)
	s.handle(e, get, "/redfish/v1/TaskService/Tasks/:task", s.getTask, false)
	s.handle(e, get, "/redfish/v1/TaskService/TaskMonitors/:task", s.getTaskMonitor, false)

	s.handle(e, get, updateServiceURI, s.getUpdateService, false)
	s.handle(e, get, firmwareURI, s.listFirmware, false)
	s.handle(e, get, firmwareURI+"/:fw", s.getFirmware, false)
	s.handle(e, post, updateServiceURI+"/Actions/"+simpleUpdate, s.simpleUpdate, false)

	s.handle(e, get, "/redfish/v1/Registries", s.listRegistries, false)
	s.handle(e, get, "/redfish/v1/Registries/:reg", s.getRegistryFile, false)
	s.handle(e, get, "/redfish/v1/Registries/:reg/:file", s.getRegistry, false)
}
