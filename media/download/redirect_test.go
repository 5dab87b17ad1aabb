package download

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
)

// dualServer serves HTTPS and plain HTTP on one port (the first byte of a
// connection decides), so a redirect can change the scheme and nothing
// else: what it saw is counted per scheme.
type dualServer struct {
	addr   string // 127.0.0.1:port
	caFile string
	mu     sync.Mutex
	seen   map[string][]string // scheme -> Authorization of each request ("" when none)
}

func newDualServer(t *testing.T, h func(scheme string, w http.ResponseWriter, r *http.Request)) *dualServer {
	t.Helper()
	ca, err := testca.New("dual server CA")
	if err != nil {
		t.Fatal(err)
	}
	tc, err := ca.ServerTLS()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dualServer{addr: ln.Addr().String(), seen: map[string][]string{}}
	d.caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(d.caFile, []byte(ca.PEM), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		d.mu.Lock()
		d.seen[scheme] = append(d.seen[scheme], r.Header.Get("Authorization"))
		d.mu.Unlock()
		h(scheme, w, r)
	})}
	go func() { _ = srv.Serve(&sniffListener{Listener: ln, tls: tc}) }()
	t.Cleanup(func() { _ = srv.Close() })
	return d
}

func (d *dualServer) requests(scheme string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.seen[scheme]...)
}

// sniffListener hands out TLS connections for those starting with a TLS
// handshake record (0x16), plain ones otherwise.
type sniffListener struct {
	net.Listener
	tls *tls.Config
}

func (l *sniffListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	pc := &peekedConn{Conn: c, r: br}
	if err == nil && first[0] == 0x16 {
		return tls.Server(pc, l.tls), nil
	}
	return pc, nil
}

type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// TestImportRedirectScheme: a redirect from https to http (same host and
// port: net/http would send the credentials along, in clear text) fails
// the import before any plain-HTTP request, with or without credentials;
// a redirect from http to https of the same host and port gets no
// credentials (another scheme).
func TestImportRedirectScheme(t *testing.T) {
	payload := bytes.Repeat([]byte("scheme "), 1000)
	const user, pass = "ironic", "downgrade-secret"
	var d *dualServer
	d = newDualServer(t, func(scheme string, w http.ResponseWriter, r *http.Request) {
		switch scheme + r.URL.Path {
		case "https/down.iso":
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="images"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, "http://"+d.addr+"/plain.iso", http.StatusFound)
		case "https/open-down.iso":
			http.Redirect(w, r, "http://"+d.addr+"/plain.iso", http.StatusFound)
		case "http/up.iso":
			http.Redirect(w, r, "https://"+d.addr+"/tls.iso", http.StatusFound)
		case "http/plain.iso", "https/tls.iso":
			_, _ = w.Write(payload)
		default:
			http.NotFound(w, r)
		}
	})
	const downgrade = "does not follow a redirect from https to http"
	t.Run("https to http with credentials", func(t *testing.T) {
		_, err := runJob(t, ImportRequest{URL: "https://" + d.addr + "/down.iso", CAFile: d.caFile, CredentialsDir: credentialsDir(t, user, pass)})
		var dg *DowngradeError
		if err == nil || !strings.Contains(err.Error(), downgrade) || !errors.As(err, &dg) || strings.Contains(err.Error(), pass) {
			t.Fatalf("err = %v, want a *DowngradeError %q without the password", err, downgrade)
		}
	})
	t.Run("https to http without credentials", func(t *testing.T) {
		_, err := runJob(t, ImportRequest{URL: "https://" + d.addr + "/open-down.iso", CAFile: d.caFile})
		if err == nil || !strings.Contains(err.Error(), downgrade) {
			t.Fatalf("err = %v, want %q", err, downgrade)
		}
	})
	if got := d.requests("http"); len(got) != 0 {
		t.Fatalf("plain HTTP got %d requests after a redirect from https (Authorization %q), want 0", len(got), got)
	}
	t.Run("http to https: no credentials for the other scheme", func(t *testing.T) {
		res, err := runJob(t, ImportRequest{URL: "http://" + d.addr + "/up.iso", CAFile: d.caFile, CredentialsDir: credentialsDir(t, user, pass)})
		if err != nil {
			t.Fatal(err)
		}
		checkSum(t, res, payload)
		if got := d.requests("https"); len(got) == 0 || got[len(got)-1] != "" {
			t.Fatalf("https requests' Authorization %q, want none on the last", got)
		}
	})
}

// TestImportRedirectTokenRedacted: a redirect whose Location carries a
// token as its user name (net/http's errors hide a password only) fails
// the import with an error that names the target without the token, for
// a target that refuses the connection and for a refused downgrade.
func TestImportRedirectTokenRedacted(t *testing.T) {
	const token = "ghp_redirect-token"
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := closed.Addr().String()
	_ = closed.Close()
	var d *dualServer
	d = newDualServer(t, func(scheme string, w http.ResponseWriter, r *http.Request) {
		switch scheme + r.URL.Path {
		case "http/dead.iso":
			http.Redirect(w, r, "http://"+token+"@"+deadAddr+"/a.iso", http.StatusFound)
		case "https/down.iso":
			http.Redirect(w, r, "http://"+token+"@"+d.addr+"/a.iso", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	for _, tt := range []struct{ name, url, want string }{
		{"target refuses the connection", "http://" + d.addr + "/dead.iso", "http://xxxxx@" + deadAddr + "/a.iso"},
		{"downgrade", "https://" + d.addr + "/down.iso", "http://xxxxx@" + d.addr + "/a.iso"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runJob(t, ImportRequest{URL: tt.url, CAFile: d.caFile})
			if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %s without the token", err, tt.want)
			}
		})
	}
}
