package media_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/podimport"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestImageCacheRecord is issue 37's attack on the image cache: a
// namespace user who mounts a filled cache entry rewrites its image and
// the meta.json recording its sha256 alike. The bridge recorded the
// entry's digest where the tenant cannot write it (a ConfigMap under its
// MAC), so a later insert of that image gets the image served, not the
// planted bytes; a record the tenant forges (the planted digest beside the
// bridge's MAC of the real one) is not honoured, a deleted one means a
// download, and the check of the copy's digest alone (no digest passed)
// also ends with the served image. The control, with no digest passed
// nor checked, copies the planted bytes.
func TestImageCacheRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			e, stop := newPodCacheEnv(t, v)
			defer stop()
			testImageCacheRecord(t, e)
		})
	}
}

func testImageCacheRecord(t *testing.T, e *env) {
	im := testca.NewVersionedImage(t)
	url := im.URL + "/recorded.iso"
	real := im.SetFresh(1<<20 + 7)
	first := e.insertReady(t, "record-0", url)
	e.checkImage(t, first.ClaimName, real)
	entry := media.CacheClaimName(first.CacheKey)
	record := e.wantRecord(t, entry, real)
	// deleteRecord deletes the bridge's record of the entry's digest.
	deleteRecord := func(t *testing.T) {
		t.Helper()
		if err := e.adminKube.CoreV1().ConfigMaps(e.ns).Delete(t.Context(), entry, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// insertGetsReal inserts url in VM name's slot, wants the served image
	// in its volume and the bridge's record of it, and reports whether the
	// image server sent the image again for it.
	insertGetsReal := func(t *testing.T, name string) bool {
		t.Helper()
		served := im.Served.Load()
		ready := e.insertReady(t, name, url)
		e.checkImage(t, ready.ClaimName, real)
		e.wantRecord(t, entry, real)
		return im.Served.Load() != served
	}

	t.Run("PlantedEntryNotCopied", func(t *testing.T) {
		e.plantEntry(t, entry)
		if !insertGetsReal(t, "record-1") {
			t.Errorf("the planted entry was not downloaded again")
		}
	})

	t.Run("ForgedRecordNotHonoured", func(t *testing.T) {
		planted := e.plantEntry(t, entry)
		deleteRecord(t)
		forged := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: entry, Namespace: e.ns, Labels: record.Labels, OwnerReferences: record.OwnerReferences,
				Annotations: map[string]string{objmac.Annotation: record.Annotations[objmac.Annotation]},
			},
			Data: map[string]string{"sha256": hex.EncodeToString(planted[:])},
		}
		if _, err := e.adminKube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), forged, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		insertGetsReal(t, "record-2")
	})

	t.Run("DeletedRecordRefills", func(t *testing.T) {
		e.plantEntry(t, entry)
		deleteRecord(t)
		if !insertGetsReal(t, "record-4") {
			t.Errorf("the entry without a record was not downloaded again")
		}
	})

	t.Run("CopyCheckAloneCatchesPlanted", func(t *testing.T) {
		// No digest passed: the pod copies the planted bytes, the bridge
		// finds its sha256 is not the record's and imports again.
		e.plantEntry(t, entry)
		podimport.PassRecordedDigest = false
		defer func() { podimport.PassRecordedDigest = true }()
		insertGetsReal(t, "record-5")
	})

	t.Run("FleetOverPlantedEntryWithoutRecord", func(t *testing.T) {
		// Inserts sharing an entry with no record: the first refills, the
		// others share it, and every copy is checked when its pod ends.
		e.plantEntry(t, entry)
		deleteRecord(t)
		const n = 3
		keys := make([]system.Key, n)
		for i := range keys {
			keys[i] = e.createVM(t, fmt.Sprintf("record-fleet-%d", i))
		}
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i, key := range keys {
			wg.Go(func() {
				got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
				if err != nil {
					t.Errorf("Insert %s: %v", key, err)
				}
				ids[i] = got.InsertID
			})
		}
		wg.Wait()
		for i, key := range keys {
			ready := e.waitSlot(t, key, slot, "Ready", func(s system.MediaSlot) bool {
				return s.InsertID == ids[i] && s.Phase == system.MediaReady
			})
			e.checkImage(t, ready.ClaimName, real)
		}
		e.wantRecord(t, entry, real)
	})

	t.Run("ControlNoDigestCopiesPlanted", func(t *testing.T) {
		planted := e.plantEntry(t, entry)
		podimport.VerifyCacheEntries = false
		defer func() { podimport.VerifyCacheEntries = true }()
		ready := e.insertReady(t, "record-3", url)
		e.checkImage(t, ready.ClaimName, planted)
	})
}

// insertReady creates the VM name, inserts url into it and waits until
// the slot is Ready through the image cache.
func (e *env) insertReady(t *testing.T, name, url string) system.MediaSlot {
	t.Helper()
	key := e.createVM(t, name)
	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatalf("Insert %s: %v", key, err)
	}
	ready := e.waitSlot(t, key, slot, "Ready", func(s system.MediaSlot) bool {
		return s.InsertID == got.InsertID && s.Phase == system.MediaReady
	})
	if ready.CacheKey == "" {
		t.Fatalf("%s: Ready without a cache key: %+v", key, ready)
	}
	return ready
}

// wantRecord checks the entry's record: the bridge's immutable ConfigMap
// of the entry's name, holding sum.
func (e *env) wantRecord(t *testing.T, entry string, sum [32]byte) *corev1.ConfigMap {
	t.Helper()
	cm, err := e.adminKube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), entry, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("image cache record: %v", err)
	}
	if cm.Data["sha256"] != hex.EncodeToString(sum[:]) || cm.Immutable == nil || !*cm.Immutable || cm.Annotations[objmac.Annotation] == "" {
		t.Errorf("image cache record %s: data %v, immutable %v, annotations %v; want the image's sha256 %x, immutable, signed",
			entry, cm.Data, cm.Immutable, cm.Annotations, sum)
	}
	return cm
}

// plantEntry is the attack: other bytes in the entry's simulated storage
// and its meta.json rewritten to describe them (same URL and validators,
// so a revalidation finds the entry fresh). It returns the planted sum.
func (e *env) plantEntry(t *testing.T, entry string) [32]byte {
	t.Helper()
	path := e.sim.ImagePath(e.ns, entry)
	metaPath := filepath.Join(filepath.Dir(path), "meta.json")
	b, err := os.ReadFile(metaPath)
	if err != nil {
		t.Fatalf("the entry's meta.json: %v", err)
	}
	var meta map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // the validators' length stays an integer
	if err := d.Decode(&meta); err != nil {
		t.Fatal(err)
	}
	planted := bytes.Repeat([]byte("planted by a tenant|"), 4096)
	sum := sha256.Sum256(planted)
	meta["bytes"], meta["sha256"] = len(planted), hex.EncodeToString(sum[:])
	if b, err = json.Marshal(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, planted, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(metaPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("planted %d bytes sha256 %x in %s: %s", len(planted), sum, entry, fmt.Sprint(meta))
	return sum
}
