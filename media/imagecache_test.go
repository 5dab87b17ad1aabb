package media_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestImageCache: N VMs insert one URL at once through the pod method (and
// then through CDI: testImageCacheCDI) and the image server sends it once; each VM gets its own PVC with the bytes;
// the image changes at that URL and a re-insert gets the new bytes; an
// insert with other credentials does not share the entry.
func TestImageCache(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			e, stop := newPodCacheEnv(t, v)
			t.Run("WaitingSlotsShowProgress", func(t *testing.T) { testPodWaitingProgress(t, e) })
			testImageCacheFleet(t, e)
			stop()
			t.Run("BudgetEvictsLeastRecentlyUsedNotInUse", func(t *testing.T) {
				r, stop := e.startReconciler(t, func(o *media.Options) {
					o.ImportMethod, o.ImageCacheBudget = media.ImportMethodPod, 20<<30 // two entries of 8Gi
				})
				defer stop()
				testImageCacheBudget(t, e, r)
			})
			t.Run("CDI", func(t *testing.T) { testImageCacheCDI(t, e) })
		})
	}
}

// newPodCacheEnv is an env with the image cache on (its key
// media.TestCacheSecret) and a reconciler importing through pods, and the
// func that stops that reconciler.
func newPodCacheEnv(t *testing.T, v crds.Variant) (*env, func()) {
	t.Helper()
	e := newEnv(t, v)
	e.svc.SetImageCache(true)
	e.svc.SetImageCacheKey(media.TestCacheSecret)
	_, stop := e.startReconciler(t, func(o *media.Options) { o.ImportMethod = media.ImportMethodPod })
	return e, stop
}

func testImageCacheFleet(t *testing.T, e *env) {
	const n, size = 5, 2<<20 + 5
	f := e.insertFleet(t, "fleet", n, size, func(system.MediaSlot) bool { return true })
	im, url, keys, inserted, before := f.image, f.url, f.keys, f.inserted, f.before
	if got := e.sim.Counters().ImportsFromCache - before.ImportsFromCache; got != n-1 {
		t.Errorf("%d imports copied from the cache, want %d", got, n-1)
	}
	entry, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(t.Context(), media.CacheClaimName(inserted[0].CacheKey), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("cache entry: %v", err)
	}
	if entry.Annotations[media.AnnotationCacheKey] != inserted[0].CacheKey || len(entry.OwnerReferences) != 1 {
		t.Errorf("cache entry %s: annotations %v, owners %v", entry.Name, entry.Annotations, entry.OwnerReferences)
	}

	t.Run("ChangedImageDownloadsAgain", func(t *testing.T) {
		e.reinsertChanged(t, im, url, keys[0], size+1000)
	})

	t.Run("OtherCredentialsDoNotShare", func(t *testing.T) {
		key := e.createVM(t, "fleet-creds")
		served := im.Served.Load()
		got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url, UserName: "someone", Password: "else"})
		if err != nil {
			t.Fatalf("Insert: %v", err)
		}
		if got.CacheKey == "" || got.CacheKey == inserted[0].CacheKey {
			t.Fatalf("insert with credentials has cache key %q, the others %q", got.CacheKey, inserted[0].CacheKey)
		}
		ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
		e.checkImage(t, ready.ClaimName, im.Sum())
		if d := im.Served.Load() - served; d == 0 {
			t.Errorf("an insert with other credentials was served from the entry of the insert without")
		}
	})

	t.Run("ForeignEntryRefused", func(t *testing.T) {
		key := e.createVM(t, "fleet-foreign")
		other := im.URL + "/other.iso"
		name := media.CacheClaimName(media.CacheKey(media.TestCacheSecret, other, false, nil, nil, nil))
		foreign := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if _, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Create(t.Context(), foreign, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: other})
		if err != nil {
			t.Fatalf("Insert: %v", err)
		}
		if media.CacheClaimName(got.CacheKey) != name {
			t.Fatalf("insert's entry %s, want %s", media.CacheClaimName(got.CacheKey), name)
		}
		failed := e.waitSlot(t, key, slot, "Failed", phaseIs(system.MediaFailed))
		if !strings.Contains(failed.Reason, "image cache PVC "+e.ns+"/"+name+" exists and was not created by redfish-bridge") {
			t.Errorf("Failed with %q", failed.Reason)
		}
		if _, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("the foreign PVC: %v", err)
		}
	})

	t.Run("NoImportPodLeft", func(t *testing.T) {
		e.eventually(t, "no import pod left", func(ctx context.Context) error {
			l, err := e.adminKube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: media.LabelComponent + "=" + media.ComponentImporter})
			if err != nil {
				return err
			}
			if len(l.Items) > 0 {
				return fmt.Errorf("%d import pods: %v", len(l.Items), podSummary(l.Items))
			}
			return nil
		})
	})
}

// insertFleet creates n VMs named prefix-<i>, inserts one fresh image of
// size bytes into all of them at once and waits until every slot is Ready
// with the insert's ID and one cache key, and with a PVC of its own that
// holds the image (ok checks more of each Ready slot); then the image
// server must have sent at most 1.05x the image. It returns the image
// server, the image's URL, the VMs, what each Insert answered and the
// simulator's counters before the inserts.
func (e *env) insertFleet(t *testing.T, prefix string, n, size int, ok func(ready system.MediaSlot) bool) fleet {
	t.Helper()
	im := testca.NewVersionedImage(t)
	url := im.URL + "/" + prefix + ".iso"
	sum := im.SetFresh(size)
	keys := make([]system.Key, n)
	for i := range keys {
		keys[i] = e.createVM(t, fmt.Sprintf("%s-%d", prefix, i))
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
		if ready.InsertID != inserted[i].InsertID || ready.CacheKey == "" || ready.CacheKey != inserted[0].CacheKey || !ok(ready) {
			t.Errorf("%s: Ready slot %+v; inserted %+v", key, ready, inserted[i])
		}
		e.checkImage(t, ready.ClaimName, sum)
		claims[ready.ClaimName] = true
	}
	if len(claims) != n {
		t.Errorf("%d VMs share %d PVCs: %v", n, len(claims), claims)
	}
	if got := im.Served.Load(); float64(got) > 1.05*float64(size) {
		t.Errorf("%d inserts of one %d-byte image: the image server sent %d body bytes (%.2fx), want <= 1.05x", n, size, got, float64(got)/float64(size))
	}
	return fleet{image: im, url: url, keys: keys, inserted: inserted, before: before}
}

// fleet is what [env.insertFleet] inserted.
type fleet struct {
	image    *testca.VersionedImage
	url      string
	keys     []system.Key
	inserted []system.MediaSlot
	before   sim.Counters
}

// reinsertChanged changes the image at url to a fresh one of size bytes,
// inserts it into key again and checks that the slot becomes Ready with
// the new bytes and that the server sent them once. It returns what the
// insert answered.
func (e *env) reinsertChanged(t *testing.T, im *testca.VersionedImage, url string, key system.Key, size int) system.MediaSlot {
	t.Helper()
	served := im.Served.Load()
	newSum := im.SetFresh(size)
	again, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatalf("re-insert: %v", err)
	}
	ready := e.waitSlot(t, key, slot, "Ready again", func(s system.MediaSlot) bool {
		return s.InsertID == again.InsertID && s.Phase == system.MediaReady
	})
	e.checkImage(t, ready.ClaimName, newSum)
	if got := im.Served.Load() - served; got != int64(size) {
		t.Errorf("the changed image: the server sent %d body bytes, want %d", got, size)
	}
	return again
}

// startCDI installs CDI's DataVolume API and runs the simulator's CDI
// until the test ends.
func (e *env) startCDI(t *testing.T) {
	t.Helper()
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
}

// checkImage compares the bytes in the claim with sum.
func (e *env) checkImage(t *testing.T, claim string, sum [32]byte) {
	t.Helper()
	data, err := os.ReadFile(e.sim.ImagePath(e.ns, claim))
	if err != nil {
		t.Fatalf("PVC %s: %v", claim, err)
	}
	if sha256.Sum256(data) != sum {
		t.Errorf("PVC %s holds %d bytes that are not the image served", claim, len(data))
	}
}

// testImageCacheBudget: under a budget of two entries a new entry evicts
// the least recently used entry (not the oldest), never one an import pod
// is reading.
func testImageCacheBudget(t *testing.T, e *env, r *media.Reconciler) {
	ctx := t.Context()
	entries := media.LabelComponent + "=" + media.ComponentImageCache
	// A clean start: the entries of the tests before go.
	if err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: entries}); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, "no cache entry left", func(ctx context.Context) error {
		l, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).List(ctx, metav1.ListOptions{LabelSelector: entries})
		if err == nil && len(l.Items) > 0 {
			err = fmt.Errorf("%d entries", len(l.Items))
		}
		return err
	})
	const size = 1<<20 + 7
	im := testca.NewVersionedImage(t)
	sum := im.SetFresh(size)
	release := im.Hold("/held.iso")
	defer release()
	vmA, vmH, vmN := e.createVM(t, "budget-a"), e.createVM(t, "budget-h"), e.createVM(t, "budget-n")
	insert := func(key system.Key, path string) string {
		t.Helper()
		got, err := e.svc.Insert(ctx, key, slot, system.MediaInsert{Image: im.URL + path})
		if err != nil {
			t.Fatalf("Insert %s into %s: %v", path, key, err)
		}
		return media.CacheClaimName(got.CacheKey)
	}
	ready := func(key system.Key, entry string) {
		t.Helper()
		vm, err := e.liveVM(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		id := vm.Slots[slot].InsertID
		got := e.waitSlot(t, key, slot, "Ready", func(s system.MediaSlot) bool { return s.InsertID == id && s.Phase == system.MediaReady })
		e.checkImage(t, got.ClaimName, sum)
	}
	state := func(name string) string {
		l, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).List(ctx, metav1.ListOptions{LabelSelector: entries})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Items {
			if p.Name == name && p.DeletionTimestamp != nil {
				return "deleting"
			} else if p.Name == name {
				return "present"
			}
		}
		return "gone"
	}

	entryA := insert(vmA, "/a.iso")
	ready(vmA, entryA)
	entryH := insert(vmH, "/held.iso") // its import pod downloads until released
	e.eventually(t, "import pod of "+vmH.String()+" running", func(ctx context.Context) error {
		pods, err := e.pods(ctx, vmH, slot)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				return nil
			}
		}
		return fmt.Errorf("pods: %v", podSummary(pods))
	})
	insert(vmA, "/a.iso") // A used after H: H is the least recently used
	ready(vmA, entryA)
	// N is made in a later second than H (creation timestamps have seconds):
	// evicting by creation instead of use would then take H below.
	h, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, entryH, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.eventually(t, "a second after "+entryH+" was made", func(context.Context) error {
		if time.Now().Before(h.CreationTimestamp.Add(time.Second)) {
			return fmt.Errorf("still %s", time.Now().Format(time.RFC3339Nano))
		}
		return nil
	})
	entryN := insert(vmN, "/next.iso") // over the budget: H is in use, A goes
	ready(vmN, entryN)
	if got := state(entryH); got != "present" {
		t.Errorf("entry %s, read by a running import pod, is %s", entryH, got)
	}
	if got := state(entryA); got == "present" {
		t.Errorf("entry %s (least recently used but for the one in use) is %s, want evicted", entryA, got)
	}
	if _, err := e.adminKube.CoreV1().ConfigMaps(e.ns).Get(ctx, entryA, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the digest record of the evicted entry %s: %v, want NotFound", entryA, err)
	}

	release()
	ready(vmH, entryH)
	insert(vmH, "/held.iso") // H used after N, though made before it
	ready(vmH, entryH)
	entryB := insert(vmA, "/b.iso") // over the budget: N is the least recently used
	ready(vmA, entryB)
	if got := state(entryN); got == "present" {
		t.Errorf("least recently used entry %s is %s, want evicted", entryN, got)
	}
	if got := state(entryH); got != "present" {
		t.Errorf("entry %s, used after %s, is %s", entryH, entryN, got)
	}
	if got := r.Stats().CacheEntriesEvicted; got != 2 {
		t.Errorf("%d entries evicted, want 2", got)
	}
}
