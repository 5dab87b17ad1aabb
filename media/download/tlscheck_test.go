package download

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCheckTLS: the insert's handshake refuses a certificate the import
// would not trust, with the TLS reason and what to do, and lets through
// what it trusts and whatever it cannot judge (left to the import).
func TestCheckTLS(t *testing.T) {
	srv, caFile := tlsImageServer(t, []byte("image"))
	_, otherCAFile := tlsImageServer(t, []byte("image"))
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := os.ReadFile(otherCAFile)
	if err != nil {
		t.Fatal(err)
	}
	// A listener that accepts and never answers the handshake.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	// A closed port: nothing listens there.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "https://" + closed.Addr().String() + "/a.iso"
	_ = closed.Close()
	denyLoopback, err := ParseAddrPolicy("deny-loopback")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		policy  AddrPolicy
		url     string
		ca      []byte
		wantErr string // "" accepted
	}{
		{"system roots only: refused", AddrPolicy{}, srv.URL + "/a.iso", nil, "x509: certificate signed by unknown authority"},
		{"another CA: refused", AddrPolicy{}, srv.URL + "/a.iso", otherCA, "x509: certificate signed by unknown authority"},
		{"its CA: accepted", AddrPolicy{}, srv.URL + "/a.iso", ca, ""},
		{"its CA among others: accepted", AddrPolicy{}, srv.URL + "/a.iso", append(append([]byte{}, otherCA...), ca...), ""},
		{"plain http: not looked at", AddrPolicy{}, "http://" + silent.Addr().String() + "/a.iso", nil, ""},
		{"nothing listening: left to the import", AddrPolicy{}, closedURL, nil, ""},
		{"address policy refuses: not dialled, left to the import", denyLoopback, srv.URL + "/a.iso", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.CheckTLS(t.Context(), tt.url, tt.ca)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckTLS: %v, want accepted", err)
				}
				return
			}
			var bad *InvalidURLError
			if !errors.As(err, &bad) || !strings.Contains(bad.Reason, tt.wantErr) || !strings.Contains(bad.Reason, UntrustedHint) {
				t.Fatalf("CheckTLS: %v, want an InvalidURLError with %q and what to do", err, tt.wantErr)
			}
		})
	}
	t.Run("a server that never answers the handshake: bounded, left to the import", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		if err := (AddrPolicy{}).CheckTLS(ctx, "https://"+silent.Addr().String()+"/a.iso", nil); err != nil {
			t.Fatalf("CheckTLS: %v, want accepted", err)
		}
	})
}
