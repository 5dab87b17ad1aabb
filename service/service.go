package service

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/backend"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/kubeauth"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// Config is everything a bridge needs to run.
type Config struct {
	// Kube is the bridge's identity towards the apiserver.
	Kube *rest.Config
	// Namespaces holding the VMs the bridge serves; empty means all.
	Namespaces []string
	// Namespace holds the bridge's own objects: the users Secret, the
	// session key Secret and the revocations ConfigMap.
	Namespace            string
	UsersSecret          string
	SessionKeySecret     string
	RevocationsConfigMap string
	// Listen is the HTTPS address, e.g. ":8443" or "127.0.0.1:0".
	Listen string
	// TLS serves HTTPS; nil serves plain HTTP (only with an explicit
	// --insecure-http).
	TLS *tls.Config
	// ServiceUUID is the Redfish service root UUID (same on every replica).
	ServiceUUID string
	Version     string
	// ImporterImage runs import pods; StorageClass holds image PVCs.
	ImporterImage string
	StorageClass  string
	Log           *slog.Logger
}

// Running is a started bridge.
type Running struct {
	// Addr is the address the server listens on (resolves ":0").
	Addr   string
	Writer *apply.Client
	Media  *media.Reconciler
	done   chan struct{}
	err    error
}

// Wait blocks until the bridge stopped (its ctx ended or the server failed)
// and returns why.
func (r *Running) Wait() error {
	<-r.done
	return r.err
}

// Start starts the bridge; it stops when ctx ends.
func Start(ctx context.Context, cfg Config) (*Running, error) {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
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
	inv, err := inventory.Start(ctx, dyn, kube, cfg.Namespaces)
	if err != nil {
		return nil, fmt.Errorf("start inventory: %w", err)
	}
	writer := apply.New(dyn, inv, mode, apply.Options{Log: log})
	mediaSvc := media.NewService(writer, kube, log)
	mediaRec, err := media.NewReconciler(media.Options{
		Writer: writer, Kube: kube, Events: inv, Namespaces: cfg.Namespaces,
		ImporterImage: cfg.ImporterImage, StorageClass: cfg.StorageClass, Log: log,
	})
	if err != nil {
		return nil, fmt.Errorf("media reconciler: %w", err)
	}
	powerSvc := power.New(writer, dyn, log)
	powerRec, err := power.NewReconciler(powerSvc, inv)
	if err != nil {
		return nil, fmt.Errorf("power reconciler: %w", err)
	}
	authn, err := authenticator(ctx, kube, cfg)
	if err != nil {
		return nil, err
	}
	be := backend.New(inv, writer, mediaSvc, powerSvc, nil)
	handler, err := redfish.New(redfish.Config{ServiceUUID: cfg.ServiceUUID, Version: cfg.Version, Logger: log}, be.Backends(authn))
	if err != nil {
		return nil, fmt.Errorf("redfish service: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{
		Handler:           handler,
		TLSConfig:         cfg.TLS,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      55 * time.Second, // within sushy's 60 s read timeout
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	r := &Running{Addr: ln.Addr().String(), Writer: writer, Media: mediaRec, done: make(chan struct{})}
	log.InfoContext(ctx, "redfish-bridge started", "addr", r.Addr, "tls", cfg.TLS != nil, "listMode", mode, "namespaces", cfg.Namespaces)

	var wg sync.WaitGroup
	var once sync.Once
	fail := func(err error) { once.Do(func() { r.err = err }) }
	wg.Add(3)
	go func() {
		defer wg.Done()
		if err := mediaRec.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			fail(fmt.Errorf("media reconciler: %w", err))
		}
	}()
	go func() {
		defer wg.Done()
		powerRec.Run(ctx, 2)
	}()
	go func() {
		defer wg.Done()
		var err error
		if cfg.TLS != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			fail(fmt.Errorf("serve: %w", err))
		}
	}()
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	go func() {
		wg.Wait()
		close(r.done)
	}()
	return r, nil
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
	a, err := auth.New(auth.Config{Users: users, Revocations: revs, Key: key})
	if err != nil {
		return nil, fmt.Errorf("authenticator: %w", err)
	}
	return a, nil
}
