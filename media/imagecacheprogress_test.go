package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// heldImage serves one image with an ETag and its Content-Length; a GET
// waits until [heldImage.sendHalf], sends the first half of the body, and
// the rest after [heldImage.sendRest] (or ends with the request).
type heldImage struct {
	*httptest.Server
	data       []byte
	gets, head atomic.Int64
	half, rest chan struct{}
	once       [2]sync.Once
}

func newHeldImage(t *testing.T, size int) *heldImage {
	t.Helper()
	h := &heldImage{half: make(chan struct{}), rest: make(chan struct{})}
	h.data = bytes.Repeat([]byte(t.Name()+"|"), size/len(t.Name())+1)[:size]
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(func() {
		h.sendHalf()
		h.sendRest()
		h.Close()
	})
	return h
}

func (h *heldImage) sendHalf() { h.once[0].Do(func() { close(h.half) }) }
func (h *heldImage) sendRest() { h.once[1].Do(func() { close(h.rest) }) }

func (h *heldImage) sum() [32]byte { return sha256.Sum256(h.data) }

func (h *heldImage) serve(w http.ResponseWriter, r *http.Request) {
	sum := h.sum()
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(h.data)))
	if r.Method == http.MethodHead {
		h.head.Add(1)
		return
	}
	h.gets.Add(1)
	mid := len(h.data) / 2
	for _, part := range []struct {
		gate <-chan struct{}
		b    []byte
	}{{h.half, h.data[:mid]}, {h.rest, h.data[mid:]}} {
		select {
		case <-part.gate:
		case <-r.Context().Done():
			return
		}
		if _, err := w.Write(part.b); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// percentBetween waits until every VM's slot is Importing with a
// PercentComplete strictly between 0 and 100.
func (e *env) percentBetween(t *testing.T, keys []system.Key) {
	t.Helper()
	e.eventually(t, "every slot Importing with 0 < Percent < 100", func(context.Context) error {
		// Each read bounded on its own: the last error says what a slot showed.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		var shown []string
		ok := true
		for _, key := range keys {
			vm, err := e.liveVM(ctx, key)
			if err != nil {
				return err
			}
			s := vm.Slots[slot]
			ok = ok && s.Phase == system.MediaImporting && s.Percent > 0 && s.Percent < 100
			shown = append(shown, fmt.Sprintf("%s %s %d%%", key.Name, s.Phase, s.Percent))
		}
		if !ok {
			return fmt.Errorf("slots %v", shown)
		}
		t.Logf("slots showed %v", shown)
		return nil
	})
}

// insertHeld creates n VMs named prefix-<i> and inserts into each one
// held image of 4 MiB (one URL).
func (e *env) insertHeld(t *testing.T, prefix string, n int) (*heldImage, []system.Key) {
	t.Helper()
	h := newHeldImage(t, 4<<20)
	url := h.URL + "/held-progress.iso"
	keys := make([]system.Key, n)
	for i := range keys {
		keys[i] = e.createVM(t, fmt.Sprintf("%s-%d", prefix, i))
	}
	for _, key := range keys {
		if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url}); err != nil {
			t.Fatalf("Insert %s: %v", key, err)
		}
	}
	return h, keys
}

// showsProgressThenReady sends half of h's body, waits until every slot
// of keys shows 0 < Percent < 100, sends the rest and checks each slot
// Ready with the image, from one GET.
func (e *env) showsProgressThenReady(t *testing.T, h *heldImage, keys []system.Key) {
	t.Helper()
	h.sendHalf()
	e.percentBetween(t, keys)
	h.sendRest()
	for _, key := range keys {
		ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
		e.checkImage(t, ready.ClaimName, h.sum())
	}
	if got := h.gets.Load(); got != 1 {
		t.Errorf("%d GETs of the image for %d inserts, want 1", got, len(keys))
	}
}

// testCDIWaitingProgress: three VMs insert one image whose CDI import into
// the shared cache entry holds at half the body: every slot, the two
// waiting for the entry too, shows the entry's progress (not only at its
// phase changes: the waiters' last wake before the hold is the entry's
// ImportInProgress, at no percentage), then all are Ready with the image.
func testCDIWaitingProgress(t *testing.T, e *env) {
	const n = 3
	h, keys := e.insertHeld(t, "cdi-progress", n)
	// Quiet before the body: every check done, every slot Importing, the
	// entry's import under way (its GET held before the first byte).
	e.eventually(t, "checks done, the entry's GET held", func(ctx context.Context) error {
		if h.head.Load() < n || h.gets.Load() != 1 {
			return fmt.Errorf("%d HEADs, %d GETs", h.head.Load(), h.gets.Load())
		}
		dvs, err := e.dataVolumes(ctx)
		if err != nil {
			return err
		}
		for _, dv := range dvs {
			phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
			if dv.GetLabels()[media.LabelComponent] == media.ComponentImageCache && phase == "ImportInProgress" {
				return nil
			}
		}
		return fmt.Errorf("no cache entry importing")
	})
	for _, key := range keys {
		e.waitSlot(t, key, slot, "Importing", phaseIs(system.MediaImporting))
	}
	e.showsProgressThenReady(t, h, keys)
}

// testPodWaitingProgress: three VMs insert one image through the import
// pod and the image cache; the download filling the entry holds at half
// the body; every slot shows its progress, read from the import pods' logs
// (the filler's progress lines, the waiting pods' echo of the filler's
// progress file), then all are Ready with the image.
func testPodWaitingProgress(t *testing.T, e *env) {
	const n = 3
	h, keys := e.insertHeld(t, "pod-progress", n)
	e.eventually(t, "the filler's GET held", func(context.Context) error {
		if h.gets.Load() != 1 {
			return fmt.Errorf("%d GETs", h.gets.Load())
		}
		return nil
	})
	e.showsProgressThenReady(t, h, keys)
}
