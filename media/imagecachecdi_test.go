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
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
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
	e.startCDI(t)
	_, stop := e.startReconciler(t, func(o *media.Options) { o.ImportMethod = media.ImportMethodCDI })
	defer stop()
	t.Run("WaitingSlotsShowProgress", func(t *testing.T) { testCDIWaitingProgress(t, e) })
	testImageCacheCDIFleet(t, e)
	stop()
	t.Run("BudgetNeverEvictsAnEntryBeingCloned", func(t *testing.T) {
		r, stop := e.startReconciler(t, func(o *media.Options) {
			o.ImportMethod, o.DefaultSize, o.ImageCacheBudget = media.ImportMethodCDI, resource.MustParse("1Gi"), 5<<29 // two entries and a half
		})
		defer stop()
		testImageCacheCDIBudget(t, e, r)
	})
}

func testImageCacheCDIFleet(t *testing.T, e *env) {
	const n, size = 5, 2<<20 + 5
	f := e.insertFleet(t, "cdi-fleet", n, size, func(ready system.MediaSlot) bool { return ready.Method == media.ImportMethodCDI })
	im, url, keys, inserted, before := f.image, f.url, f.keys, f.inserted, f.before
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
		again := e.reinsertChanged(t, im, url, keys[0], size+1000)
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

// testImageCacheCDIBudget: under a budget of two entries and a half, a
// third entry evicts nothing while clones of the other two are in
// progress (CloneInProgress, held by the simulator); once they are done, a
// fourth evicts the two least recently used.
func testImageCacheCDIBudget(t *testing.T, e *env, r *media.Reconciler) {
	ctx := t.Context()
	entries := media.LabelComponent + "=" + media.ComponentImageCache
	// A clean start: the entries of the tests before go.
	if err := e.admin.Resource(media.DataVolumeResource).Namespace(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: entries}); err != nil {
		t.Fatal(err)
	}
	state := func(prefix string) string {
		t.Helper()
		l, err := e.admin.Resource(media.DataVolumeResource).Namespace(e.ns).List(ctx, metav1.ListOptions{LabelSelector: entries})
		if err != nil {
			t.Fatal(err)
		}
		for _, dv := range l.Items {
			if strings.HasPrefix(dv.GetName(), prefix) && dv.GetDeletionTimestamp() != nil {
				return "deleting"
			} else if strings.HasPrefix(dv.GetName(), prefix) {
				return "present"
			}
		}
		return "gone"
	}
	e.eventually(t, "no cache entry left", func(context.Context) error {
		if got := state(""); got != "gone" {
			return fmt.Errorf("an entry is %s", got)
		}
		return nil
	})
	im := testca.NewVersionedImage(t)
	sum := im.SetFresh(1<<20 + 9)
	vms := map[string]system.Key{}
	for _, n := range []string{"a", "b", "c", "d"} {
		vms[n] = e.createVM(t, "cdi-budget-"+n)
	}
	insert := func(n string) (system.MediaSlot, string) {
		t.Helper()
		got, err := e.svc.Insert(ctx, vms[n], slot, system.MediaInsert{Image: im.URL + "/" + n + ".iso"})
		if err != nil {
			t.Fatalf("Insert %s: %v", n, err)
		}
		return got, media.CacheClaimName(got.CacheKey) // the entry's name starts so
	}
	cloning := func(n string) {
		t.Helper()
		e.eventually(t, n+"'s clone in progress", func(ctx context.Context) error {
			dvs, err := e.dataVolumes(ctx)
			if err != nil {
				return err
			}
			for _, dv := range dvs {
				phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
				if ownerIs(&dv, vms[n].Name) && dv.GetLabels()[media.LabelComponent] == media.ComponentMedia && phase == "CloneInProgress" {
					return nil
				}
			}
			return fmt.Errorf("no clone of %s in progress", n)
		})
	}
	ready := func(n string, ins system.MediaSlot) {
		t.Helper()
		got := e.waitSlot(t, vms[n], slot, "Ready", func(s system.MediaSlot) bool { return s.InsertID == ins.InsertID && s.Phase == system.MediaReady })
		e.checkImage(t, got.ClaimName, sum)
	}

	release := e.sim.HoldClones()
	defer release()
	insA, entryA := insert("a")
	cloning("a")
	insB, entryB := insert("b")
	cloning("b")
	insC, entryC := insert("c") // over the budget: A and B are being cloned
	cloning("c")
	if a, b := state(entryA), state(entryB); a != "present" || b != "present" {
		t.Errorf("entries read by clones in progress: %s is %s, %s is %s; want both present", entryA, a, entryB, b)
	}
	release()
	ready("a", insA)
	ready("b", insB)
	ready("c", insC)
	insD, entryD := insert("d") // over the budget: A and B are the least recently used
	ready("d", insD)
	for _, gone := range []string{entryA, entryB} {
		if got := state(gone); got == "present" {
			t.Errorf("least recently used entry %s is %s, want evicted", gone, got)
		}
	}
	for _, kept := range []string{entryC, entryD} {
		if got := state(kept); got != "present" {
			t.Errorf("entry %s is %s, want kept", kept, got)
		}
	}
	if got := r.Stats().CacheEntriesEvicted; got != 2 {
		t.Errorf("%d entries evicted, want 2", got)
	}
}
