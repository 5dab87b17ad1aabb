package download

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// hostileServer serves the attacks on the importer:
//
//	/bomb.iso       32 MiB of zeros gzipped (~32 KiB on the wire) with
//	                Content-Encoding: gzip, whatever the client asked for
//	/chunked-3Mi    3 MiB without Content-Length
//	/announce/<n>   Content-Length: n, then nothing (the body never comes)
type hostileServer struct {
	*httptest.Server
	mu       sync.Mutex
	encoding []string // Accept-Encoding of each request
	sent     int64    // body bytes written
}

func newHostileServer(t *testing.T) *hostileServer {
	t.Helper()
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 32<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	h := &hostileServer{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.encoding = append(h.encoding, r.Header.Get("Accept-Encoding"))
		h.mu.Unlock()
		count := func(n int) {
			h.mu.Lock()
			h.sent += int64(n)
			h.mu.Unlock()
		}
		switch {
		case r.URL.Path == "/bomb.iso":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(bomb.Len()))
			n, _ := w.Write(bomb.Bytes())
			count(n)
		case r.URL.Path == "/chunked-3Mi":
			for range (3 << 20) / len(chunk) {
				n, err := w.Write(chunk)
				count(n)
				if err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		case strings.HasPrefix(r.URL.Path, "/announce/"):
			w.Header().Set("Content-Length", strings.TrimPrefix(r.URL.Path, "/announce/"))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

// TestImportAttacks: what a hostile image server sends is never written
// past the limits, never inflated, and fails the import with a message
// that says why. Without the fix the bomb imported as 32 MiB "success",
// and every size was accepted.
func TestImportAttacks(t *testing.T) {
	srv := newHostileServer(t)
	tests := []struct {
		name    string
		path    string
		args    []string
		wantErr string // in the error and the termination message
		need    int64  // NeedBytes expected in the termination message
	}{
		{"gzip bomb is not inflated", "/bomb.iso", nil, `Content-Encoding "gzip"`, 0},
		{"body past the maximum", "/chunked-3Mi", []string{"--max-size=1Mi"}, "more than the maximum image size 1Mi (stopped after 1048577 bytes)", 0},
		{"1 PiB announced", "/announce/1125899906842624", nil, "image is 1125899906842624 bytes (1Pi), more than the maximum image size 64Gi", 0},
		{"MaxInt64 announced", "/announce/9223372036854775807", nil, "image is 9223372036854775807 bytes", 0},
		{"announced past the PVC", "/announce/104857600", []string{"--claim-size=64Mi"}, "image is 104857600 bytes, the PVC holds 61008058", 104857600},
		{"unannounced past the PVC: sized from the real bytes", "/chunked-3Mi", []string{"--claim-size=1Mi"}, "image is 3145728 bytes", 3 << 20},
		{"past the PVC and the maximum", "/chunked-3Mi", []string{"--claim-size=1Mi", "--max-size=2Mi"}, "more than the maximum image size 2Mi", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			termLog := filepath.Join(dir, "termination-log")
			var out bytes.Buffer
			err := RunImport(t.Context(), flag.NewFlagSet("import", flag.ContinueOnError), append([]string{
				"--url=" + srv.URL + tt.path, "--dest=" + filepath.Join(dir, "disk.img"),
				"--timeout=30s", "--termination-log=" + termLog,
			}, tt.args...), &out)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
			var nr *NeedRoomError
			if errors.As(err, &nr) != (tt.need > 0) {
				t.Fatalf("err %v: NeedRoomError %v, want %v", err, nr != nil, tt.need > 0)
			}
			msg, rerr := os.ReadFile(termLog)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if tt.need > 0 {
				res, ok := ParseImportResult(string(msg))
				if !ok || res.NeedBytes != tt.need || res.Bytes != 0 {
					t.Fatalf("termination message %q, want needBytes %d", msg, tt.need)
				}
			} else if !strings.Contains(string(msg), tt.wantErr) {
				t.Fatalf("termination message %q lacks %q", msg, tt.wantErr)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() != "termination-log" {
					t.Fatalf("left %s behind after a refused import", e.Name())
				}
			}
		})
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for i, enc := range srv.encoding {
		if enc != "identity" {
			t.Errorf("request %d sent Accept-Encoding %q, want identity", i, enc)
		}
	}
}

// TestLimitsKeep: how much of a body is written to the PVC.
func TestLimitsKeep(t *testing.T) {
	for _, tt := range []struct {
		lim  Limits
		want int64
	}{
		{Limits{}, -1},
		{Limits{MaxBytes: 10}, 10},
		{Limits{RoomBytes: 5}, 5},
		{Limits{MaxBytes: 10, RoomBytes: 5}, 5},
		{Limits{MaxBytes: 10, RoomBytes: 50}, 10},
	} {
		if got := tt.lim.keep(); got != tt.want {
			t.Errorf("%+v.keep() = %d, want %d", tt.lim, got, tt.want)
		}
	}
}
