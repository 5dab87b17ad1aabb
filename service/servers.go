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
)

// serve listens on addr and serves h (HTTPS when tlsCfg is set) until ctx
// ends; it returns the resolved address. A serving error calls fail.
func serve(ctx context.Context, wg *sync.WaitGroup, name, addr string, h http.Handler, tlsCfg *tls.Config,
	log *slog.Logger, fail func(error)) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("%s: listen on %s: %w", name, addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         tlsCfg,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      55 * time.Second, // within sushy's 60 s read timeout
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	wg.Go(func() {
		var err error
		if tlsCfg != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			fail(fmt.Errorf("%s: serve: %w", name, err))
		}
	})
	wg.Go(func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	})
	return ln.Addr().String(), nil
}
