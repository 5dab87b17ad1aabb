package download

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

func TestParseProgress(t *testing.T) {
	type got struct {
		Written, Total int64
		OK             bool
	}
	for _, tc := range []struct {
		name, out string
		want      got
	}{
		{"none", "", got{}},
		{"one", "progress 10 100\n", got{10, 100, true}},
		{"last wins", "progress 10 100\nprogress 55 100\n", got{55, 100, true}},
		{"unknown total", "progress 7 -1", got{7, -1, true}},
		{"result after", "progress 100 100\n{\"bytes\":100}\n", got{100, 100, true}},
		{"garbage ignored", "progress 20 100\nprogress x 100\nprogress 1 2 3\nprogress -1 100\n", got{20, 100, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, tot, ok := ParseProgress([]byte(tc.out))
			if d := cmp.Diff(tc.want, got{w, tot, ok}); d != "" {
				t.Errorf("ParseProgress(%q) (-want +got):\n%s", tc.out, d)
			}
		})
	}
}

func TestProgressPercent(t *testing.T) {
	for _, tc := range []struct {
		written, total int64
		want           int
	}{
		{0, 100, 0}, {1, 100, 1}, {50, 100, 50}, {100, 100, 99}, {5, -1, 0}, {5, 0, 0},
	} {
		t.Run(fmt.Sprintf("%d_of_%d", tc.written, tc.total), func(t *testing.T) {
			if got := ProgressPercent(tc.written, tc.total); got != tc.want {
				t.Errorf("ProgressPercent(%d, %d) = %d, want %d", tc.written, tc.total, got, tc.want)
			}
		})
	}
}

// lockedBuffer is an import's output, read while it is written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) progress() (written, total int64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return ParseProgress(b.buf.Bytes())
}

// TestWaitingImportPrintsFillersProgress: two imports of one image into
// one cache entry; the download (the filler) holds at half the body; the
// import waiting for the entry's lock prints the filler's progress, not
// nothing, then both finish with the image.
func TestWaitingImportPrintsFillersProgress(t *testing.T) {
	defer func(d time.Duration) { ProgressInterval = d }(ProgressInterval)
	ProgressInterval = 10 * time.Millisecond
	data := testImage("progress|", 1<<20)
	half := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"p1"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		select {
		case <-half:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(data[len(data)/2:])
	}))
	defer srv.Close()
	var once sync.Once
	release := func() { once.Do(func() { close(half) }) }
	defer release()

	cacheDir, dests := t.TempDir(), t.TempDir()
	var running sync.WaitGroup
	t.Cleanup(func() { release(); running.Wait() }) // before the directories go
	run := func(name string, out *lockedBuffer) <-chan error {
		done := make(chan error, 1)
		running.Go(func() {
			report, stop := PrintProgress(out)
			_, err := ImportRequest{URL: srv.URL + "/i.iso", Dest: filepath.Join(dests, name), CacheDir: cacheDir, Progress: report}.Run(t.Context())
			stop()
			done <- err
		})
		return done
	}
	var filler, waiter lockedBuffer
	fillerDone := run("filler", &filler)
	midway := func(b *lockedBuffer) func(context.Context) error {
		return func(context.Context) error {
			w, tot, ok := b.progress()
			if !ok || w <= 0 || w >= tot {
				return fmt.Errorf("progress %d of %d (a line: %t)", w, tot, ok)
			}
			return nil
		}
	}
	testutil.Eventually(t, "the filler prints its progress", 30*time.Second, 5*time.Millisecond, midway(&filler))
	waiterDone := run("waiter", &waiter)
	testutil.Eventually(t, "the waiting import prints the filler's progress", 30*time.Second, 5*time.Millisecond, midway(&waiter))
	release()
	for name, done := range map[string]<-chan error{"filler": fillerDone, "waiter": waiterDone} {
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkFile(t, filepath.Join(dests, name), data)
	}
}
