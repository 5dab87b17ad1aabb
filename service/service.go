package service

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/console"
	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventdelivery"
	"github.com/redfish-bridge/redfish-bridge/eventstream"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/ipmi"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/metrics"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/sshconsole"
	"github.com/redfish-bridge/redfish-bridge/vncconsole"
	"github.com/redfish-bridge/redfish-bridge/webui"
)

// Config is everything a bridge needs to run.
type Config struct {
	// Kube is the bridge's identity towards the apiserver.
	Kube *rest.Config
	// Namespaces holding the VMs the bridge serves; empty means all.
	Namespaces []string
	// Namespace holds the bridge's own objects: the users Secret, the
	// session key Secret and the sessions ConfigMap (open and revoked
	// sessions, see kubeauth).
	Namespace            string
	UsersSecret          string
	SessionKeySecret     string
	RevocationsConfigMap string
	// MaxSessionsPerUser bounds one user's open sessions (0: the default
	// auth.DefaultMaxSessionsPerUser, negative: only the store's bound).
	MaxSessionsPerUser int
	// Listen is the HTTPS address, e.g. ":8443" or "127.0.0.1:0".
	Listen string
	// TLS serves HTTPS; nil serves plain HTTP (only with an explicit
	// --insecure-http). TLS 1.2 is limited to ECDHE AEAD suites unless the
	// config names its own.
	TLS *tls.Config
	// Limits bound header size and open connections of both servers.
	Limits Limits
	// GraphicalConsole is the graphical console's settings (package
	// vncconsole): served on the HTTPS port under /console/.
	GraphicalConsole vncconsole.Config
	// ServiceUUID is the Redfish service root UUID (same on every replica).
	ServiceUUID string
	Version     string
	// ImporterImage runs import pods; StorageClass holds image PVCs.
	ImporterImage string
	StorageClass  string
	// ImageCAConfigMap names a ConfigMap in Namespace whose key
	// ImageCAKey (default ca.crt) is a PEM bundle every verifying import
	// trusts besides the system roots; "" for none.
	ImageCAConfigMap, ImageCAKey string
	// MaxImageSize is the largest image an import writes (bytes; 0: the
	// media default); ImageClaimSize the size of an image PVC before the
	// image's size is known (zero: the media default).
	MaxImageSize   int64
	ImageClaimSize resource.Quantity
	// IPMI are the IPMI endpoint's settings (off by default).
	IPMI ipmi.Config
	// HeldPowerOnTimeout is how long a power-on may wait for a media
	// import before it is dropped (0: power.DefaultHoldTimeout).
	HeldPowerOnTimeout time.Duration
	// ImportMethod is how images are imported: media.ImportMethodAuto ("":
	// a CDI DataVolume where CDI is installed, else the import pod),
	// "pod" or "cdi".
	ImportMethod string
	// ImageCache shares one download among the inserts of one image in a
	// namespace (media.Service.SetImageCache; the pod method).
	ImageCache bool
	// ImageCacheKey is the secret the image cache keys are an HMAC under
	// (media.Service.SetImageCacheKey): the same on every replica and
	// across restarts. Required with ImageCache.
	ImageCacheKey []byte
	// ImageCacheBudget bounds each namespace's image cache entries (bytes;
	// 0: no bound; media.Options.ImageCacheBudget).
	ImageCacheBudget int64
	// Events are the EventService's settings (zero ones take
	// eventdelivery.DefaultConfig's).
	Events eventdelivery.Config
	// SSE are the EventService's Server-Sent Events' settings (zero ones
	// take eventstream.DefaultConfig's).
	SSE eventstream.Config
	// EventBus is this replica's event bus's settings (its history).
	EventBus event.Config
	// ImageAddrPolicy is which addresses image URLs may reach: checked on
	// insert (literal IPs; host names too, resolved, unless ImportMethod
	// is "pod") and by the import pods on every connection.
	ImageAddrPolicy download.AddrPolicy
	// MetricsListen is the plain-HTTP address serving /metrics, /healthz
	// and /readyz (e.g. ":9090"); "" serves none ([Running.Metrics] still
	// collects).
	MetricsListen string
	// Leader configures leader election for the reconcilers; the zero value
	// elects on the Lease "redfish-bridge" in Namespace.
	Leader LeaderElection
	// UserWrites is each Redfish user's share of the apiserver budget for
	// writes (redfish.WriteShare); the zero value does not limit.
	UserWrites redfish.WriteShare
	// WebUI configures the web pages served beside /redfish (withPages).
	WebUI webui.Config
	// Console are the serial console stream's limits (package console).
	Console console.Config
	// SSHConsole is the SSH serial console's listener (package
	// sshconsole); off when its Listen is "".
	SSHConsole sshconsole.Config
	Log        *slog.Logger // the bridge's logger; nil: the one Start's ctx carries (logctx)
}

// Running is a started bridge.
type Running struct {
	// Addr is the address the server listens on (resolves ":0").
	Addr string
	// MetricsAddr is the metrics server's address ("" without one).
	MetricsAddr string
	// SSHConsoleAddr is the SSH serial console's address ("" without one).
	SSHConsoleAddr string
	Writer         *apply.Client
	Metrics        *metrics.Metrics
	// Events is this replica's event bus: what package eventsource
	// publishes of every VM change.
	Events *event.Bus
	mgr    *manager.Manager
	recs   reconcilers
}

// Wait blocks until the bridge stopped (its ctx ended or a part failed)
// and returns why.
func (r *Running) Wait() error { return r.mgr.Wait() }

// Leading reports whether this replica holds the Lease and runs the
// reconcilers now.
func (r *Running) Leading() bool { return r.mgr.Leading() }

// MediaStats are the media reconcilers' counters summed over every
// leadership term of this replica.
func (r *Running) MediaStats() media.Stats { return r.recs.mediaStats() }

// Start starts the bridge: it returns once the caches synced and the
// servers listen. The bridge stops when ctx ends, or when a part fails
// (Wait returns the error). Which part starts when, and stops when, is
// the manager's groups' (package manager).
func Start(ctx context.Context, cfg Config) (_ *Running, err error) {
	if cfg.ImageCache && len(cfg.ImageCacheKey) == 0 {
		return nil, errors.New("image cache: no key (Config.ImageCacheKey)")
	}
	// Every part (informers, servers, reconcilers, leader election) logs
	// with cfg.Log, carried in ctx.
	ctx, cancel := context.WithCancel(logctx.Into(ctx, cmp.Or(cfg.Log, logctx.From(ctx))))
	defer func() {
		if err != nil {
			cancel()
		}
	}()
	cl, err := newClients(cfg.Kube)
	if err != nil {
		return nil, err
	}
	r := &Running{Metrics: metrics.New()}
	r.mgr = manager.New(manager.Options{Elect: elect(cl.kube, cfg, r.Metrics)})
	metricsSrv, err := addProbes(r.mgr, cfg, r.Metrics.Handler(r.mgr.Ready))
	if err != nil {
		return nil, err
	}
	c, err := addCaches(r.mgr, cl, cfg)
	if err != nil {
		return nil, err
	}
	if err := r.mgr.Start(ctx); err != nil {
		return nil, err
	}
	con, err := newConcerns(cl, c, cfg, r.Metrics)
	if err != nil {
		return nil, err
	}
	r.Writer, r.recs, r.Events = con.writer, con.recs, con.bus
	backends := con.redfishBackends()
	handler, err := redfish.New(redfish.Config{
		ServiceUUID: cfg.ServiceUUID, Version: cfg.Version, Observe: r.Metrics.ObserveRequest,
		UserWrites: cfg.UserWrites, Authenticated: markAuthenticated,
	}, backends)
	if err != nil {
		return nil, fmt.Errorf("redfish service: %w", err)
	}
	redfishSrv, err := addServer(r.mgr, manager.Servers, "redfish", cfg.Listen, withPages(cfg.WebUI, withConsole(handler, con.graphical)), cfg.TLS, cfg.Limits)
	if err != nil {
		return nil, err
	}
	parts, err := addParts(r.mgr, con)
	if err != nil {
		return nil, err
	}
	if err := r.mgr.Serve(ctx); err != nil {
		return nil, err
	}
	r.Addr, r.MetricsAddr, r.SSHConsoleAddr = redfishSrv.Addr(), metricsSrv.Addr(), parts.ssh.Addr()
	logctx.From(ctx).InfoContext(ctx, "redfish-bridge started", "addr", r.Addr, "metrics", r.MetricsAddr, "tls", cfg.TLS != nil,
		"listMode", c.mode, "namespaces", cfg.Namespaces)
	return r, nil
}
