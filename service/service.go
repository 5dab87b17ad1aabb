package service

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/backend"
	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/kubeauth"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/metrics"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/virtapi"
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
	Log        *slog.Logger // the bridge's logger; nil: the one Start's ctx carries (logctx)
}

// Running is a started bridge.
type Running struct {
	// Addr is the address the server listens on (resolves ":0").
	Addr string
	// MetricsAddr is the metrics server's address ("" without one).
	MetricsAddr string
	Writer      *apply.Client
	Metrics     *metrics.Metrics
	recs        *reconcilers
	done        chan struct{}
	err         error
}

// Wait blocks until the bridge stopped (its ctx ended or the server failed)
// and returns why.
func (r *Running) Wait() error {
	<-r.done
	return r.err
}

// Leading reports whether this replica holds the Lease and runs the
// reconcilers now.
func (r *Running) Leading() bool { return r.recs.Leading() }

// MediaStats are the media reconcilers' counters summed over every
// leadership term of this replica.
func (r *Running) MediaStats() media.Stats { return r.recs.mediaStats() }

// Start starts the bridge; it stops when ctx ends, or when a part fails
// (Wait returns the error).
func Start(ctx context.Context, cfg Config) (_ *Running, err error) {
	if cfg.ImageCache && len(cfg.ImageCacheKey) == 0 {
		return nil, errors.New("image cache: no key (Config.ImageCacheKey)")
	}
	log := cfg.Log
	if log == nil {
		log = logctx.From(ctx)
	}
	// Everything started here (informers, reconcilers, leader election)
	// logs with log, carried in ctx.
	ctx = logctx.Into(ctx, log)
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		if err != nil {
			cancel()
		}
	}()
	m := metrics.New()
	var ready atomic.Bool
	r := &Running{Metrics: m, done: make(chan struct{})}
	var wg sync.WaitGroup
	var once sync.Once
	fail := func(err error) {
		once.Do(func() { r.err = err })
		cancel()
	}
	if cfg.MetricsListen != "" {
		// Up before the caches sync: /healthz answers, /readyz says why not.
		h := m.Handler(func() error {
			if !ready.Load() {
				return errors.New("caches not synced yet")
			}
			return nil
		})
		if r.MetricsAddr, err = serve(ctx, &wg, "metrics", cfg.MetricsListen, h, nil, cfg.Limits, fail); err != nil {
			return nil, err
		}
	}
	dyn, err := dynamic.NewForConfig(cfg.Kube)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg.Kube)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	mode, err := apply.DetectMode(ctx, dyn)
	if err != nil {
		return nil, fmt.Errorf("detect list mode: %w", err)
	}
	// The users, session key and revocations are read while the inventory
	// lists every VM (seconds with thousands of them), not after it.
	authc := make(chan authResult, 1)
	go func() {
		a, err := authenticator(ctx, kube, cfg)
		authc <- authResult{a, err}
	}()
	inv, err := inventory.Start(ctx, dyn, kube, cfg.Namespaces)
	if err != nil {
		return nil, fmt.Errorf("start inventory: %w", err)
	}
	// The objects the bridge acts on (trust ConfigMaps) count only under a
	// MAC keyed from the session key: every replica has it, no tenant does.
	objectSecret, err := kubeauth.SessionKey(ctx, kube, cfg.Namespace, cfg.SessionKeySecret)
	if err != nil {
		return nil, fmt.Errorf("object secret: %w", err)
	}
	// The slots' trust ConfigMaps, so GETs of VirtualMedia and Certificates
	// read no apiserver (data held only of those the bridge signed).
	trust, err := media.StartTrustCache(ctx, kube, cfg.Namespaces, objectSecret)
	if err != nil {
		return nil, fmt.Errorf("start trust cache: %w", err)
	}
	var _ apply.DecisionCache = inv // ValidateLegacy decided once per VM version, kept beside its managedFields
	writer := apply.New(dyn, inv, mode, apply.Options{})
	r.Writer = writer
	mediaSvc := media.NewService(writer, kube)
	mediaSvc.SetTrustCache(trust)
	mediaSvc.SetObjectSecret(objectSecret)
	mediaSvc.SetAddrPolicy(cfg.ImageAddrPolicy)
	mediaSvc.SetImageCache(cfg.ImageCache)
	mediaSvc.SetImageCacheKey(cfg.ImageCacheKey)
	if cfg.ImportMethod != media.ImportMethodPod {
		// CDI's importer may import: it checks no address it dials, so an
		// image URL's host name is resolved and checked at insert.
		mediaSvc.SetHostResolver(net.DefaultResolver)
	}
	if cfg.ImageCAConfigMap != "" {
		mediaSvc.SetCABundle(media.CABundle{Namespace: cfg.Namespace, ConfigMap: cfg.ImageCAConfigMap, Key: cfg.ImageCAKey})
	}
	mediaCtrl, mediaCount := controller.New("media", controller.Options{Workers: reconcileWorkers}), &media.Counters{}
	mediaOpts := media.Options{
		Controller: mediaCtrl, Counters: mediaCount,
		Writer: writer, Kube: kube, Dynamic: dyn, Events: inv, Namespaces: cfg.Namespaces, ImportMethod: cfg.ImportMethod,
		Options: importer.Options{
			ImporterImage: cfg.ImporterImage, StorageClass: cfg.StorageClass,
			MaxImageSize: cfg.MaxImageSize, DefaultSize: cfg.ImageClaimSize, AddrPolicy: cfg.ImageAddrPolicy,
			ImageCacheBudget: cfg.ImageCacheBudget,
		},
		ObserveImport: m.ObserveImport,
	}
	if _, err := media.NewReconciler(mediaOpts); err != nil { // check the options now
		return nil, fmt.Errorf("media reconciler: %w", err)
	}
	forcer, err := virtapi.New(cfg.Kube)
	if err != nil {
		return nil, err
	}
	powerSvc := power.New(writer, dyn, forcer)
	powerSvc.SetHoldTimeout(cfg.HeldPowerOnTimeout)
	powerRec := power.NewReconciler(powerSvc, inv, reconcileWorkers)
	r.recs = &reconcilers{mediaCount: mediaCount, list: []reconciler{
		{ctrl: mediaCtrl, term: func() (func(context.Context) error, error) {
			rec, err := media.NewReconciler(mediaOpts)
			if err != nil {
				return nil, fmt.Errorf("media reconciler: %w", err)
			}
			return rec.Run, nil
		}},
		{ctrl: powerRec.Controller(), term: func() (func(context.Context) error, error) { return powerRec.Run, nil }},
	}}
	m.Watch(metrics.Sources{Applies: writer.Stats, Media: r.recs.mediaStats, Controllers: r.recs.controllers,
		RebootPolicyFallbacks: writer.RebootPolicyFallbacks})
	authn := <-authc
	if authn.err != nil {
		return nil, authn.err
	}
	be := backend.New(inv, writer, mediaSvc, powerSvc, nil)
	handler, err := redfish.New(redfish.Config{
		ServiceUUID: cfg.ServiceUUID, Version: cfg.Version, Observe: m.ObserveRequest,
		UserWrites:    cfg.UserWrites,
		Authenticated: markAuthenticated,
	}, be.Backends(authn.authn))
	if err != nil {
		return nil, fmt.Errorf("redfish service: %w", err)
	}
	if r.Addr, err = serve(ctx, &wg, "redfish", cfg.Listen, handler, cfg.TLS, cfg.Limits, fail); err != nil {
		return nil, err
	}
	ready.Store(true)
	log.InfoContext(ctx, "redfish-bridge started", "addr", r.Addr, "metrics", r.MetricsAddr, "tls", cfg.TLS != nil,
		"listMode", mode, "namespaces", cfg.Namespaces)

	leader := cfg.Leader.withDefaults()
	wg.Go(func() {
		err := campaign(ctx, kube, cfg.Namespace, leader,
			func(v bool) { r.recs.setLeading(v); m.SetLeader(v) },
			func(ctx context.Context) {
				if err := r.recs.run(ctx); err != nil {
					fail(err)
				}
			})
		if err != nil {
			fail(err)
		}
	})
	go func() {
		wg.Wait()
		cancel()
		close(r.done)
	}()
	return r, nil
}

// authResult is what [authenticator] returned.
type authResult struct {
	authn *auth.Authenticator
	err   error
}

func authenticator(ctx context.Context, kube kubernetes.Interface, cfg Config) (*auth.Authenticator, error) {
	users, err := kubeauth.WatchSecretUsers(ctx, kube, cfg.Namespace, cfg.UsersSecret)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	key, err := kubeauth.SessionKey(ctx, kube, cfg.Namespace, cfg.SessionKeySecret)
	if err != nil {
		return nil, err
	}
	revs, err := kubeauth.WatchConfigMapRevocations(ctx, kube, cfg.Namespace, cfg.RevocationsConfigMap)
	if err != nil {
		return nil, err
	}
	a, err := auth.New(auth.Config{Users: users, Revocations: revs, Sessions: revs, Key: key, MaxSessionsPerUser: cfg.MaxSessionsPerUser})
	if err != nil {
		return nil, fmt.Errorf("authenticator: %w", err)
	}
	return a, nil
}
