package bridgeproc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBin writes a shell script standing in for the bridge binary.
func fakeBin(t *testing.T, script string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "redfish-bridge")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil { // an executable test script
		t.Fatal(err)
	}
	return bin
}

func start(t *testing.T, script string, o Options) *Proc {
	t.Helper()
	o.Bin = fakeBin(t, script)
	o.Log = filepath.Join(t.TempDir(), "bridge.log")
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Kill(); err != nil {
			t.Error(err)
		}
	})
	return p
}

func TestExitBeforeServingReportsTheLog(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, `echo "args: $*"; exit 3`, Options{Kubeconfig: "/k", Namespace: "own", Namespaces: []string{"a", "b"}, Listen: addr})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err = p.WaitServing(ctx, "http://"+addr+"/redfish/v1/Systems", "u", "p")
	if err == nil || !strings.Contains(err.Error(), "exited before serving") {
		t.Fatalf("WaitServing = %v, want the exit reported", err)
	}
	want := "args: serve --kubeconfig=/k --namespace=own --namespaces=a,b --service-uuid=" + ServiceUUID +
		" --listen=" + addr + " --insecure-http --metrics-listen= --pod-name=bridge-0"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("WaitServing error %q does not hold the log line %q", err, want)
	}
}

func TestWaitServingSendsBasicAuth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, pw, ok := r.BasicAuth(); !ok || u != "admin" || pw != "secret" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	p := start(t, "exec sleep 600", Options{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := p.WaitServing(ctx, srv.URL, "admin", "secret"); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	default:
		t.Error("Done not closed after Kill returned")
	}
}

// TestTLSServing: with TLSCert and TLSKey the bridge is started with them
// instead of --insecure-http (and with Options.Env in its environment), and
// WaitServing reaches an https URL whose certificate is self-signed.
func TestTLSServing(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	p := start(t, `echo "args: $* GOMEMLIMIT=$GOMEMLIMIT"; exec sleep 600`,
		Options{Listen: "127.0.0.1:1", TLSCert: "/c.pem", TLSKey: "/k.pem", Env: []string{"GOMEMLIMIT=123MiB"}})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := p.WaitServing(ctx, srv.URL, "admin", "secret"); err != nil {
		t.Fatal(err)
	}
	tail := p.Tail()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(tail, "args:") && time.Now().Before(deadline); tail = p.Tail() {
		time.Sleep(10 * time.Millisecond) // the script's echo may land after WaitServing returned
	}
	if !strings.Contains(tail, "--listen=127.0.0.1:1 --tls-cert=/c.pem --tls-key=/k.pem --metrics-listen=") || strings.Contains(tail, "--insecure-http") {
		t.Errorf("bridge started with %q, want --tls-cert and --tls-key, no --insecure-http", tail)
	}
	if !strings.Contains(tail, "GOMEMLIMIT=123MiB") {
		t.Errorf("bridge started with %q, want GOMEMLIMIT=123MiB in its environment", tail)
	}
}
