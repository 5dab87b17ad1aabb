package download

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
)

func testImage(tag string, size int) []byte {
	return bytes.Repeat([]byte(tag), size/len(tag)+1)[:size]
}

// TestRunCached performs what N import pods of one key do at once against
// one cache entry: one download, every destination the image; a changed
// image downloads again; a server without validators is never cached.
func TestRunCached(t *testing.T) {
	const size, n = 1<<20 + 3, 8
	for _, tc := range []struct {
		name    string
		noValid bool
		// wantServed is the body bytes the server sends for the first n
		// imports, then for one import after the image changed.
		wantServed, wantAfterChange int64
	}{
		{name: "validators", wantServed: size, wantAfterChange: 2 * size},
		{name: "no validators", noValid: true, wantServed: n * size, wantAfterChange: (n + 1) * size},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im := testca.NewVersionedImage(t)
			im.Set(testImage("one|", size))
			if tc.noValid {
				im.WithoutValidators()
			}
			cacheDir, dests := t.TempDir(), t.TempDir()
			run := func(i int) (ImportResult, error) {
				req := ImportRequest{URL: im.URL + "/image.iso", Dest: filepath.Join(dests, fmt.Sprint(i)), CacheDir: cacheDir}
				return req.Run(t.Context())
			}
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() { _, errs[i] = run(i) })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("import %d: %v", i, err)
				}
				checkFile(t, filepath.Join(dests, fmt.Sprint(i)), testImage("one|", size))
			}
			if got := im.Served.Load(); got != tc.wantServed {
				t.Errorf("%d concurrent imports: the server sent %d body bytes, want %d", n, got, tc.wantServed)
			}

			im.Set(testImage("two|", size))
			res, err := run(n)
			if err != nil {
				t.Fatalf("import after the change: %v", err)
			}
			if res.FromCache {
				t.Errorf("import after the change was served from the cache")
			}
			checkFile(t, filepath.Join(dests, fmt.Sprint(n)), testImage("two|", size))
			if got := im.Served.Load(); got != tc.wantAfterChange {
				t.Errorf("after the change: the server sent %d body bytes in all, want %d", got, tc.wantAfterChange)
			}
		})
	}
}

func checkFile(t *testing.T, name string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: %d bytes, not the image served (%d bytes)", name, len(got), len(want))
	}
}

// TestRunCachedSharedFailure: the imports waiting for one download of
// their key fail with its error, without a request of their own; a retry
// afterwards downloads once.
func TestRunCachedSharedFailure(t *testing.T) {
	const size, n = 64<<10 + 1, 5
	var gets atomic.Int64
	gate, fail := make(chan struct{}), atomic.Bool{}
	fail.Store(true)
	data := testImage("img|", size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			<-gate
		}
		if fail.Load() {
			http.Error(w, "disk full", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "image.iso", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	var arrived sync.WaitGroup
	arrived.Add(n)
	cacheArrived = arrived.Done
	t.Cleanup(func() { cacheArrived = func() {} })
	cacheDir, dests := t.TempDir(), t.TempDir()
	run := func(i int) (ImportResult, error) {
		req := ImportRequest{URL: srv.URL + "/image.iso", Dest: filepath.Join(dests, fmt.Sprint(i)), CacheDir: cacheDir}
		return req.Run(t.Context())
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = run(i) })
	}
	arrived.Wait() // every import came before the download failed
	close(gate)
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Fatalf("import %d succeeded", i)
		}
		if diff := cmp.Diff(errs[0].Error(), err.Error()); diff != "" {
			t.Errorf("import %d failed otherwise (-first +this):\n%s", i, diff)
		}
	}
	if got := gets.Load(); got != 1 {
		t.Errorf("%d imports waiting on one download: %d GETs, want 1", n, got)
	}
	t.Logf("every import: %v", errs[0])

	cacheArrived = func() {}
	fail.Store(false)
	if _, err := run(n); err != nil {
		t.Fatalf("retry: %v", err)
	}
	checkFile(t, filepath.Join(dests, fmt.Sprint(n)), data)
	if got := gets.Load(); got != 2 {
		t.Errorf("the retry made %d GETs in all, want 2", got)
	}
}

// TestRunCachedFillerGone: the import downloading into the entry ends
// (its pod deleted: its VM ejected) while others wait; they are not failed
// with its end: the next one downloads and the rest copy.
func TestRunCachedFillerGone(t *testing.T) {
	const size, n = 64<<10 + 1, 3
	var gets atomic.Int64
	inFlight, release := make(chan struct{}), make(chan struct{})
	data := testImage("img|", size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && gets.Add(1) == 1 {
			close(inFlight)
			select { // the first download never ends by itself
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "image.iso", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	var arrived sync.WaitGroup
	arrived.Add(n)
	cacheArrived = arrived.Done
	t.Cleanup(func() { cacheArrived = func() {} })
	cacheDir, dests := t.TempDir(), t.TempDir()
	run := func(ctx context.Context, i int) error {
		req := ImportRequest{URL: srv.URL + "/image.iso", Dest: filepath.Join(dests, fmt.Sprint(i)), CacheDir: cacheDir}
		_, err := req.Run(ctx)
		return err
	}
	fillerCtx, cancel := context.WithCancel(t.Context())
	errs := make([]error, n)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = run(fillerCtx, 0) })
	<-inFlight
	for i := 1; i < n; i++ {
		wg.Go(func() { errs[i] = run(t.Context(), i) })
	}
	arrived.Wait()
	cancel() // the downloading pod is deleted
	wg.Wait()
	if errs[0] == nil {
		t.Errorf("the cancelled download succeeded")
	}
	for i := 1; i < n; i++ {
		if errs[i] != nil {
			t.Errorf("waiting import %d: %v", i, errs[i])
			continue
		}
		checkFile(t, filepath.Join(dests, fmt.Sprint(i)), data)
	}
	if got := gets.Load(); got != 2 {
		t.Errorf("%d GETs, want 2 (the cancelled one, then one for the waiting imports)", got)
	}
}

// TestRunCachedPlantedEntry is issue 37's attack 5 on the import pod's
// side: a namespace user mounts the cache entry and rewrites its image
// and meta.json alike (the server's validators kept, the planted bytes'
// digest recorded). With the digest the bridge recorded (--cache-sha256)
// or with no record (--cache-refill) the import downloads the image again
// and the destination holds the server's bytes; trusting the entry alone
// copies the planted bytes (the old behaviour, kept as the control).
func TestRunCachedPlantedEntry(t *testing.T) {
	const size = 64<<10 + 1
	im := testca.NewVersionedImage(t)
	im.Set(testImage("real|", size))
	for _, tc := range []struct {
		name        string
		req         func(r *ImportRequest, recorded string)
		wantPlanted bool
	}{
		{"the bridge's digest", func(r *ImportRequest, recorded string) { r.CacheSHA256 = recorded }, false},
		{"no record of the entry", func(r *ImportRequest, _ string) { r.CacheRefill = true }, false},
		{"no digest given (control)", func(*ImportRequest, string) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cacheDir, dests := t.TempDir(), t.TempDir()
			first := ImportRequest{URL: im.URL + "/image.iso", Dest: filepath.Join(dests, "first"), CacheDir: cacheDir}
			res, err := first.Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			planted := testImage("planted|", size)
			if err := os.WriteFile(filepath.Join(cacheDir, cacheImage), planted, 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(cacheDir, cacheMeta))
			if err != nil {
				t.Fatal(err)
			}
			var meta entryMeta
			if err := json.Unmarshal(b, &meta); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(planted)
			meta.SHA256 = hex.EncodeToString(sum[:])
			if b, err = json.Marshal(meta); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cacheDir, cacheMeta), b, 0o644); err != nil {
				t.Fatal(err)
			}
			next := ImportRequest{URL: im.URL + "/image.iso", Dest: filepath.Join(dests, "next"), CacheDir: cacheDir}
			tc.req(&next, res.SHA256)
			got, err := next.Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantPlanted {
				checkFile(t, next.Dest, planted)
				return
			}
			checkFile(t, next.Dest, testImage("real|", size))
			if got.FromCache || got.SHA256 != res.SHA256 {
				t.Errorf("import after the planting: %+v, want a download of sha256 %s", got, res.SHA256)
			}
		})
	}
}
