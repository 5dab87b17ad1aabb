package download

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// imageServer serves payload at /image.iso, 404 elsewhere, a short body at
// /short.iso and hangs at /slow.iso until the request ends.
func imageServer(t *testing.T, payload []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/image.iso":
			http.ServeContent(w, r, "image.iso", time.Time{}, bytes.NewReader(payload))
		case "/short.iso":
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte("only ten b"))
		case "/slow.iso":
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunImport(t *testing.T) {
	payload := bytes.Repeat([]byte("redfish-bridge ISO "), 50000)
	sum := sha256.Sum256(payload)
	srv := imageServer(t, payload)

	tests := []struct {
		name    string
		path    string
		timeout string
		wantErr string // "" = success
	}{
		{"ok", "/image.iso", "10s", ""},
		{"404", "/missing.iso", "10s", "HTTP 404"},
		{"truncated", "/short.iso", "10s", "unexpected EOF"},
		{"timeout", "/slow.iso", "200ms", "import timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "disk.img")
			termLog := filepath.Join(dir, "termination-log")
			var out bytes.Buffer
			err := RunImport(t.Context(), flag.NewFlagSet("import", flag.ContinueOnError), []string{
				"--url=" + srv.URL + tt.path, "--dest=" + dest,
				"--timeout=" + tt.timeout, "--termination-log=" + termLog,
			}, &out)
			msg, rerr := os.ReadFile(termLog)
			if rerr != nil {
				t.Fatalf("termination log: %v", rerr)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				if !strings.Contains(string(msg), tt.wantErr) {
					t.Fatalf("termination message %q lacks %q", msg, tt.wantErr)
				}
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if e.Name() != "termination-log" {
						t.Fatalf("left %s behind after a failed import", e.Name())
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("RunImport: %v", err)
			}
			got, err := os.ReadFile(dest)
			if err != nil {
				t.Fatal(err)
			}
			gotSum := sha256.Sum256(got)
			if gotSum != sum {
				t.Fatalf("sha256 of the imported file %x, want %x", gotSum, sum)
			}
			res, ok := ParseImportResult(string(msg))
			if !ok {
				t.Fatalf("termination message %q is not an import result", msg)
			}
			if d := cmp.Diff(ImportResult{Bytes: int64(len(payload)), SHA256: hex.EncodeToString(sum[:])}, res); d != "" {
				t.Fatalf("result (-want +got):\n%s", d)
			}
		})
	}
}

func TestRunImportRejects(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no url", []string{"--dest=/tmp/x"}, "required"},
		{"file url", []string{"--url=file:///etc/passwd", "--dest=/tmp/x"}, "scheme must be http or https"},
		{"bad flag", []string{"--nope"}, "not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			termLog := filepath.Join(t.TempDir(), "log")
			var out bytes.Buffer
			err := RunImport(t.Context(), flag.NewFlagSet("import", flag.ContinueOnError), append(tt.args, "--termination-log="+termLog), &out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
}

func TestParseImportResult(t *testing.T) {
	tests := []struct {
		msg string
		ok  bool
	}{
		{`{"bytes":12,"sha256":"ab"}`, true},
		{"  {\"bytes\":12}\n", true},
		{`{"bytes":0}`, false},
		{`{"validators":{"etag":"\"v1\"","length":5}}`, true},
		{"GET x: HTTP 404", false},
		{"", false},
	}
	for _, tt := range tests {
		if _, ok := ParseImportResult(tt.msg); ok != tt.ok {
			t.Errorf("ParseImportResult(%q) ok = %v, want %v", tt.msg, ok, tt.ok)
		}
	}
}

// TestImportArgsDefaults: an import pod without size flags still stops at
// the default maximum image size.
func TestImportArgsDefaults(t *testing.T) {
	def, err := ParseImportArgs([]string{"--url=http://x/", "--dest=/d"})
	if err != nil {
		t.Fatal(err)
	}
	if def.MaxBytes != DefaultMaxImageSize || !def.ClaimSize.IsZero() {
		t.Errorf("defaults: max %d, claim %s", def.MaxBytes, def.ClaimSize.String())
	}
	for _, bad := range []string{"--max-size=0", "--max-size=2Pi", "--claim-size=lots"} {
		if _, err := ParseImportArgs([]string{"--url=http://x/", "--dest=/d", bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
