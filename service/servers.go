package service

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/redfish-bridge/redfish-bridge/internal/connshare"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// Defaults of [Limits]. Redfish requests carry a few hundred bytes of
// headers (a session token, Basic credentials, If-Match); Go's own default
// of 1 MiB per request let slow clients holding unfinished headers grow the
// bridge by ~1.4 MB per connection.
const (
	DefaultMaxHeaderBytes = 32 << 10
	DefaultMaxConnections = 512
)

// Limits bound what unauthenticated clients can make the server hold.
type Limits struct {
	// MaxHeaderBytes caps a request's header (HTTP/1 request line and
	// headers; HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE, which net/http derives
	// from it); default [DefaultMaxHeaderBytes].
	MaxHeaderBytes int
	// MaxConnections caps open connections, TLS handshakes included. A
	// connection over the cap closes one of whoever holds more than its
	// share (each user its authenticated connections, each address its
	// others; see connshare.Listener), a handshake first, or is itself closed
	// when every open connection is a user's within its share. Default
	// [DefaultMaxConnections]; negative means no cap.
	MaxConnections int
}

func (l Limits) withDefaults() Limits {
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxConnections == 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	return l
}

// tlsSuites are the TLS 1.2 cipher suites served: ECDHE with AEAD only (no
// CBC, no SHA-1 MAC, no RSA key exchange). TLS 1.3 suites are not
// configurable and all AEAD.
var tlsSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// HardenTLS returns a copy of cfg serving TLS 1.2 or later with
// [tlsSuites] unless cfg names its own.
func HardenTLS(cfg *tls.Config) *tls.Config {
	cfg = cfg.Clone()
	cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS12)
	if cfg.CipherSuites == nil {
		cfg.CipherSuites = tlsSuites
	}
	return cfg
}

// server is one HTTP(S) server of the bridge, a part of the manager's
// Probes or Servers group: it listens when its part starts (ready once it
// listens: [server.WaitReady]), serves h (HTTPS when tls is set) until its
// ctx ends, then shuts down. Requests' contexts carry ctx's values (its
// logger: logctx), not its end: a request in flight at shutdown finishes
// (5 s at most).
type server struct {
	name, addr string
	h          http.Handler
	tls        *tls.Config
	limits     Limits

	listening chan struct{} // closed once ln is set
	ln        net.Listener
}

// newServer returns the server part name serving h on addr.
func newServer(name, addr string, h http.Handler, tlsCfg *tls.Config, limits Limits) *server {
	return &server{name: name, addr: addr, h: h, tls: tlsCfg, limits: limits.withDefaults(), listening: make(chan struct{})}
}

// WaitReady returns once the server listens ([manager.Readier]).
func (s *server) WaitReady(ctx context.Context) error {
	select {
	case <-s.listening:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Addr is the address the server listens on (":0" resolved), only after
// WaitReady returned nil; "" for no server (nil).
func (s *server) Addr() string {
	if s == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Start listens and serves until ctx ends; a listen or serve error is
// returned (and stops the bridge).
func (s *server) Start(ctx context.Context) error {
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", s.addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", s.name, s.addr, err)
	}
	if s.limits.MaxConnections > 0 {
		ln = connshare.New(ln, s.limits.MaxConnections)
	}
	h, tlsCfg := s.h, s.tls
	if tlsCfg != nil {
		tlsCfg = HardenTLS(tlsCfg)
		h = withHSTS(h)
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         tlsCfg,
		MaxHeaderBytes:    s.limits.MaxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second, // also bounds the TLS handshake
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      55 * time.Second, // within sushy's 60 s read timeout
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(logctx.From(ctx).Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if s.limits.MaxConnections > 0 {
		trackConns(srv)
	}
	s.ln = ln
	close(s.listening)
	served := make(chan error, 1)
	go func() {
		if tlsCfg != nil {
			served <- srv.ServeTLS(ln, "", "")
		} else {
			served <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		_ = srv.Close()
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("%s: serve: %w", s.name, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	if err := <-served; !errors.Is(err, http.ErrServerClosed) { // returned as soon as Shutdown began
		return fmt.Errorf("%s: serve: %w", s.name, err)
	}
	return nil
}

// hsts is the Strict-Transport-Security of every HTTPS answer (RFC 6797):
// a browser that reached the bridge over HTTPS refuses plain HTTP to it
// for a year, as real BMCs ask. No includeSubDomains: the names below the
// bridge's are not the bridge's to pin.
const hsts = "max-age=31536000"

// withHSTS sets [hsts] on every answer of h. Only HTTPS servers use it:
// the header means nothing over plain HTTP (RFC 6797 section 7.2).
func withHSTS(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", hsts)
		h.ServeHTTP(w, r)
	})
}
