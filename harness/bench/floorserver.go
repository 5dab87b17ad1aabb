package bench

import (
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/service"
)

// FloorServer is the floor of a Redfish GET: a minimal Go HTTPS server
// with the bridge's TLS configuration (the demo's self-signed ECDSA
// certificate, [service.HardenTLS]) that checks the Basic credentials
// against a constant and answers every path it was given with the same
// bytes the bridge answered, with the bridge's JSON and OData headers.
// Whatever the bridge takes beyond it is the bridge's own cost.
type FloorServer struct {
	URL    string
	srv    *http.Server
	done   chan error
	mu     sync.Mutex
	bodies map[string][]byte
}

// StartFloor starts the floor server on a free loopback port.
func StartFloor(user, password string) (*FloorServer, error) {
	cert, err := demo.SelfSignedCert()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("floor server: listen: %w", err)
	}
	want := "Basic " + basicToken(user, password)
	f := &FloorServer{URL: "https://" + ln.Addr().String(), done: make(chan error, 1), bodies: map[string][]byte{}}
	f.srv = &http.Server{
		TLSConfig: service.HardenTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			f.mu.Lock()
			body, ok := f.bodies[r.URL.Path]
			f.mu.Unlock()
			if !ok {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("OData-Version", "4.0")
			h.Set("Cache-Control", "no-store")
			_, _ = w.Write(body)
		}),
	}
	go func() { f.done <- f.srv.ServeTLS(ln, "", "") }()
	return f, nil
}

// Serve makes path answer body, whatever its query (a $top/$skip page is
// answered with the first page's bytes).
func (f *FloorServer) Serve(path string, body []byte) {
	path, _, _ = strings.Cut(path, "?")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies[path] = body
}

// Close stops the server.
func (f *FloorServer) Close() error {
	if err := f.srv.Close(); err != nil {
		return fmt.Errorf("floor server: close: %w", err)
	}
	if err := <-f.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("floor server: %w", err)
	}
	return nil
}

// basicToken is the credential part of a Basic Authorization header.
func basicToken(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}
