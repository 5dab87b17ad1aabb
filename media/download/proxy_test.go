package download

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// importArgsEnv carries the import arguments (newline-separated) into the
// child process of [TestImportTakesNoProxy].
const importArgsEnv = "REDFISH_BRIDGE_TEST_IMPORT_ARGS"

// forwardProxy is an HTTP proxy that counts what reaches it and forwards
// it: plain requests by URL, CONNECT as a tunnel.
func forwardProxy(t *testing.T, addr string, hits *atomic.Int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Method == http.MethodConnect {
			up, err := net.Dial("tcp", r.Host)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			w.WriteHeader(http.StatusOK)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				_ = up.Close()
				return
			}
			go func() { _, _ = io.Copy(up, conn); _ = up.Close() }()
			_, _ = io.Copy(conn, up)
			_ = conn.Close()
			return
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp, err := (&http.Transport{}).RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestImportTakesNoProxy: with HTTP_PROXY and HTTPS_PROXY pointing at a
// proxy the policy allows, an import of a URL whose host resolves to a
// refused address fails, and neither the proxy nor the refused address
// sees a request (through a proxy only the proxy's address would be
// checked). The import runs in a child process, as in the import pod:
// net/http reads the proxy environment once per process.
func TestImportTakesNoProxy(t *testing.T) {
	if args := os.Getenv(importArgsEnv); args != "" {
		var out strings.Builder
		err := RunImport(context.Background(), flag.NewFlagSet("import", flag.ContinueOnError), strings.Split(args, "\n"), &out)
		fmt.Print(out.String())
		if err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	// The refused address: a loopback one with a name other than
	// "localhost" (net/http never proxies "localhost" or an IP literal).
	name, addr := loopbackName(t)
	proxyAddr := "127.0.0.2"
	if addr == proxyAddr {
		proxyAddr = "127.0.0.3"
	}
	var proxied, reached atomic.Int64
	proxy := forwardProxy(t, proxyAddr, &proxied)
	count := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		_, _ = w.Write([]byte("metadata"))
	})
	var urls []string
	for _, tls := range []bool{false, true} {
		ln, err := net.Listen("tcp", addr+":0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: count}}
		scheme := "http"
		if tls {
			srv.StartTLS()
			scheme = "https"
		} else {
			srv.Start()
		}
		t.Cleanup(srv.Close)
		urls = append(urls, fmt.Sprintf("%s://%s:%d/a.iso", scheme, name, ln.Addr().(*net.TCPAddr).Port))
	}
	for _, url := range urls {
		t.Run(url[:strings.Index(url, ":")], func(t *testing.T) {
			args := []string{"--url=" + url, "--dest=" + t.TempDir() + "/disk.img", "--addr-policy=deny=" + addr + "/32", "--insecure-skip-verify"}
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestImportTakesNoProxy$")
			cmd.Env = append(withoutProxyEnv(os.Environ()), importArgsEnv+"="+strings.Join(args, "\n"),
				"HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy, "http_proxy="+proxy, "https_proxy="+proxy)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Errorf("import of %s through HTTP_PROXY succeeded:\n%s", url, out)
			}
			if !strings.Contains(string(out), "address policy refuses "+addr) {
				t.Errorf("import of %s: no refusal of %s in the output:\n%s", url, addr, out)
			}
			t.Logf("import of %s: %s", url, strings.TrimSpace(string(out)))
		})
	}
	if p, r := proxied.Load(), reached.Load(); p != 0 || r != 0 {
		t.Fatalf("requests through the proxy %d, at the refused address %d; want 0 and 0", p, r)
	}
}

// withoutProxyEnv is env without proxy settings.
func withoutProxyEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "REQUEST_METHOD":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// loopbackName is a host name /etc/hosts gives a loopback IPv4 address,
// other than "localhost", and that address.
func loopbackName(t *testing.T) (string, string) {
	t.Helper()
	b, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Skipf("no /etc/hosts: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		ip, err := netip.ParseAddr(f[0])
		if err != nil || !ip.Is4() || !ip.IsLoopback() {
			continue
		}
		for _, name := range f[1:] {
			if !strings.EqualFold(name, "localhost") {
				return name, ip.String()
			}
		}
	}
	t.Skip("/etc/hosts names no loopback IPv4 address but localhost")
	return "", ""
}
