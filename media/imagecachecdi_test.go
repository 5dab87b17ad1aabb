package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// testImageCacheCDI: where CDI imports, N VMs insert one URL at once and
// the image server sends it once: one check pod (HEAD) per insert, one
// CDI import into the cache entry, and every slot's DataVolume a CDI
// clone of the entry's PVC (the simulator copies the bytes); the image
// changes at that URL and a re-insert gets the new bytes.
func testImageCacheCDI(t *testing.T, e *env) {
	if err := e.cluster.InstallCDI(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.sim.RunDataVolumes(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("simulated CDI: %v", err)
		}
	})
	_, stop := e.startReconciler(t, func(o *media.Options) { o.ImportMethod = media.ImportMethodCDI })
	defer stop()

	const n, size = 5, 2<<20 + 5
	im := testca.NewVersionedImage(t)
	url := im.URL + "/fleet-cdi.iso"
	sum := im.SetFresh(size)
	keys := make([]system.Key, n)
	for i := range keys {
		keys[i] = e.createVM(t, fmt.Sprintf("cdi-fleet-%d", i))
	}
	before := e.sim.Counters()
	inserted := make([]system.MediaSlot, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Go(func() { inserted[i], errs[i] = e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url}) })
	}
	wg.Wait()
	claims := map[string]bool{}
	for i, key := range keys {
		if errs[i] != nil {
			t.Fatalf("Insert %s: %v", key, errs[i])
		}
		ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
		if ready.InsertID != inserted[i].InsertID || ready.Method != media.ImportMethodCDI || ready.CacheKey == "" || ready.CacheKey != inserted[0].CacheKey {
			t.Errorf("%s: Ready slot %+v; inserted %+v", key, ready, inserted[i])
		}
		e.checkImage(t, ready.ClaimName, sum)
		claims[ready.ClaimName] = true
	}
	if len(claims) != n {
		t.Errorf("%d VMs share %d PVCs: %v", n, len(claims), claims)
	}
	if got := im.Served.Load(); float64(got) > 1.05*size {
		t.Errorf("%d inserts of one %d-byte image: the image server sent %d body bytes (%.2fx), want <= 1.05x", n, size, got, float64(got)/size)
	}
	after := e.sim.Counters()
	if got := after.Clones - before.Clones; got != n {
		t.Errorf("%d CDI clones, want %d", got, n)
	}
	if got := after.CloneBytes - before.CloneBytes; got != n*size {
		t.Errorf("the clones copied %d bytes, want %d", got, n*size)
	}
	if got := after.ImageChecks - before.ImageChecks; got != n {
		t.Errorf("%d image checks (HEAD), want %d", got, n)
	}
	entry := e.cdiEntryOf(t, keys, inserted[0].CacheKey)

	t.Run("ChangedImageDownloadsAgain", func(t *testing.T) {
		served := im.Served.Load()
		newSum := im.SetFresh(size + 1000)
		again, err := e.svc.Insert(t.Context(), keys[0], slot, system.MediaInsert{Image: url})
		if err != nil {
			t.Fatalf("re-insert: %v", err)
		}
		ready := e.waitSlot(t, keys[0], slot, "Ready again", func(s system.MediaSlot) bool {
			return s.InsertID == again.InsertID && s.Phase == system.MediaReady
		})
		e.checkImage(t, ready.ClaimName, newSum)
		if got := im.Served.Load() - served; got != size+1000 {
			t.Errorf("the changed image: the server sent %d body bytes, want %d", got, size+1000)
		}
		if next := e.cdiEntryOf(t, keys[:1], again.CacheKey); next == entry {
			t.Errorf("the changed image was cloned from the entry of the old one, %s", entry)
		}
	})

	t.Run("FailedDownloadFailsWaitingSlotsRetryDownloadsAgain", func(t *testing.T) { testCDISharedFailure(t, e) })

	t.Run("NoCheckPodLeft", func(t *testing.T) {
		e.eventually(t, "no check pod left", func(ctx context.Context) error {
			l, err := e.adminKube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: media.LabelImageCheck})
			if err != nil {
				return err
			}
			if len(l.Items) > 0 {
				return fmt.Errorf("%d check pods: %v", len(l.Items), podSummary(l.Items))
			}
			return nil
		})
	})
}

// cdiEntryOf checks that the slot DataVolume of every VM of keys is a
// clone of one CDI cache entry of key (a DataVolume labelled image-cache,
// annotated with the key, owned by one VM) and returns that entry's name.
func (e *env) cdiEntryOf(t *testing.T, keys []system.Key, key string) string {
	t.Helper()
	dvs, err := e.dataVolumes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]unstructured.Unstructured{}
	sources := map[string]string{}
	for _, dv := range dvs {
		switch dv.GetLabels()[media.LabelComponent] {
		case media.ComponentImageCache:
			entries[dv.GetName()] = dv
		case media.ComponentMedia:
			src, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "pvc", "name")
			for _, ref := range dv.GetOwnerReferences() {
				sources[ref.Name] = src
			}
		}
	}
	name := sources[keys[0].Name]
	for _, k := range keys {
		if sources[k.Name] != name || name == "" {
			t.Errorf("%s's DataVolume clones %q, %s's %q", k, sources[k.Name], keys[0], name)
		}
	}
	dv, ok := entries[name]
	if !ok {
		t.Fatalf("the clones' source %q is no cache entry (entries %v)", name, entries)
	}
	if dv.GetAnnotations()[media.AnnotationCacheKey] != key || len(dv.GetOwnerReferences()) != 1 {
		t.Errorf("cache entry %s: annotations %v, owners %v", name, dv.GetAnnotations(), dv.GetOwnerReferences())
	}
	return name
}

// testCDISharedFailure: three inserts wait for one entry whose CDI import
// fails (HTTP 503): all three fail with the same error, after one GET; an
// insert after the failure imports the entry again and succeeds.
func testCDISharedFailure(t *testing.T, e *env) {
	data := bytes.Repeat([]byte("shared failure|"), 20000)
	var gets atomic.Int64
	var failing atomic.Bool
	failing.Store(true)
	gate := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"shared-1"`)
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			return
		}
		gets.Add(1)
		if failing.Load() {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(data)
	}))
	defer srv.Close()
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	url := srv.URL + "/shared.iso"
	keys := make([]system.Key, 3)
	for i := range keys {
		keys[i] = e.createVM(t, fmt.Sprintf("cdi-shared-%d", i))
	}
	checks := e.sim.Counters().ImageChecks
	for _, key := range keys {
		if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url}); err != nil {
			t.Fatalf("Insert %s: %v", key, err)
		}
	}
	// Every insert checked the image before the entry's import fails.
	e.eventually(t, "three image checks", func(context.Context) error {
		if n := e.sim.Counters().ImageChecks - checks; n < int64(len(keys)) {
			return fmt.Errorf("%d checks", n)
		}
		return nil
	})
	close(gate)
	var reasons []string
	for _, key := range keys {
		failed := e.waitSlot(t, key, slot, "Failed", phaseIs(system.MediaFailed))
		reasons = append(reasons, failed.Reason)
	}
	if !strings.Contains(reasons[0], "503") || reasons[1] != reasons[0] || reasons[2] != reasons[0] {
		t.Errorf("the waiting inserts failed with %q: want one error, HTTP 503", reasons)
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("the image server got %d GETs for three inserts of one failed image, want 1", n)
	}

	failing.Store(false)
	// The failure is recorded to the second: an insert in a later second is
	// one after it.
	failedAt := time.Now()
	e.eventually(t, "a second after the failure", func(context.Context) error {
		if time.Now().Before(failedAt.Add(time.Second)) {
			return fmt.Errorf("still %s", time.Now().Format(time.RFC3339Nano))
		}
		return nil
	})
	again, err := e.svc.Insert(t.Context(), keys[0], slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatalf("re-insert: %v", err)
	}
	ready := e.waitSlot(t, keys[0], slot, "Ready after the retry", func(s system.MediaSlot) bool {
		return s.InsertID == again.InsertID && s.Phase == system.MediaReady
	})
	e.checkImage(t, ready.ClaimName, sha256.Sum256(data))
	if n := gets.Load(); n != 2 {
		t.Errorf("the retry: %d GETs in all, want 2", n)
	}
}
