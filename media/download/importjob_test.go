package download

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
)

// tlsImageServer serves payload over HTTPS with a certificate of its own
// private CA; it returns the server and a file holding that CA as PEM.
func tlsImageServer(t *testing.T, payload []byte) (*httptest.Server, string) {
	t.Helper()
	ca, err := testca.New("image server CA")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(payload)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, []byte(ca.PEM), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, file
}

// credentialsDir writes a mounted-Secret-like directory.
func credentialsDir(t *testing.T, user, pass string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{CredentialUserKey: user, CredentialPasswordKey: pass} {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runJob(t *testing.T, job ImportRequest) (ImportResult, error) {
	t.Helper()
	job.Dest = filepath.Join(t.TempDir(), "disk.img")
	return job.Run(t.Context())
}

// jobCase is one import and the error it must end with ("" = imported).
type jobCase struct {
	name    string
	job     ImportRequest
	wantErr string
}

// runJobCases runs each case; a successful one must have imported
// payload, and no error may show secret.
func runJobCases(t *testing.T, cases []jobCase, payload []byte, secret string) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			res, err := runJob(t, tt.job)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				checkSum(t, res, payload)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
			if secret != "" && strings.Contains(err.Error(), secret) {
				t.Fatalf("error %q shows the secret", err)
			}
		})
	}
}

func checkSum(t *testing.T, res ImportResult, payload []byte) {
	t.Helper()
	sum := sha256.Sum256(payload)
	if res.SHA256 != hex.EncodeToString(sum[:]) || res.Bytes != int64(len(payload)) {
		t.Fatalf("imported %d bytes sha256 %s, want %d bytes %x", res.Bytes, res.SHA256, len(payload), sum)
	}
}

func TestImportRequestTLS(t *testing.T) {
	payload := bytes.Repeat([]byte("private CA "), 10000)
	srv, ca := tlsImageServer(t, payload)
	_, otherCA := tlsImageServer(t, payload)

	tests := []jobCase{
		{"system roots only: refused", ImportRequest{URL: srv.URL + "/a.iso"}, "not trusted: POST its CA to the slot's Certificates"},
		{"another CA: refused", ImportRequest{URL: srv.URL + "/a.iso", CAFile: otherCA}, "certificate signed by unknown authority"},
		{"its CA: imported", ImportRequest{URL: srv.URL + "/a.iso", CAFile: ca}, ""},
		{"VerifyCertificate false: imported", ImportRequest{URL: srv.URL + "/a.iso", SkipVerify: true}, ""},
	}
	runJobCases(t, tests, payload, "")
	t.Run("a CA file without certificates is an error", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := runJob(t, ImportRequest{URL: srv.URL + "/a.iso", CAFile: bad}); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestImportRequestBasicAuth(t *testing.T) {
	payload := bytes.Repeat([]byte("basic auth "), 10000)
	const user, pass = "ironic", "s3cr3t-image-pass"
	var leaked atomic.Int32
	// elsewhere is another server (same IP, another port) a redirect leads
	// to: it must never see the credentials (net/http itself would forward
	// an Authorization header set on the first request to it).
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		_, _ = w.Write(payload)
	}))
	t.Cleanup(elsewhere.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="images"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/redirect.iso" {
			http.Redirect(w, r, elsewhere.URL+"/a.iso", http.StatusFound)
			return
		}
		_, _ = w.Write(payload)
	}))
	t.Cleanup(srv.Close)

	tests := []jobCase{
		{"no credentials", ImportRequest{URL: srv.URL + "/a.iso"}, "HTTP 401 Unauthorized (the image server asks for credentials: give UserName and Password in InsertMedia)"},
		{"wrong password", ImportRequest{URL: srv.URL + "/a.iso", CredentialsDir: credentialsDir(t, user, "wrong")}, "refused the UserName and Password"},
		{"right credentials", ImportRequest{URL: srv.URL + "/a.iso", CredentialsDir: credentialsDir(t, user, pass)}, ""},
		{"redirect to another host", ImportRequest{URL: srv.URL + "/redirect.iso", CredentialsDir: credentialsDir(t, user, pass)}, ""},
	}
	runJobCases(t, tests, payload, pass)
	if n := leaked.Load(); n != 0 {
		t.Fatalf("the host a redirect led to received credentials %d times", n)
	}
}

func TestImportArgsRoundTrip(t *testing.T) {
	want := ImportRequest{
		URL: "https://images.example/a.iso", Dest: "/image/disk.img", Timeout: 90 * time.Second,
		Policy: AddrPolicy{DenyPrivate: true}, CAFile: "/etc/ca.pem", SkipVerify: true, CredentialsDir: "/etc/creds",
		MaxBytes: 3 << 30, ClaimSize: resource.MustParse("8Gi"),
	}
	got, err := ParseImportArgs(want.Args())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(AddrPolicy{}),
		cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Fatalf("ParseImportArgs(Args()) (-want +got):\n%s", diff)
	}
	head := ImportRequest{URL: "https://images.example/a.iso", HeadOnly: true, Timeout: time.Minute, MaxBytes: DefaultMaxImageSize}
	if got, err := ParseImportArgs(head.Args()); err != nil || !got.HeadOnly || got.Dest != "" {
		t.Fatalf("ParseImportArgs(%q) = %+v, %v: want a --head-only request without --dest", head.Args(), got, err)
	}
	if _, err := ParseImportArgs([]string{"--url=x", "--dest=y", "stray"}); err == nil {
		t.Fatal("a stray argument was accepted")
	}
}
