package cdiimport

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestEvictSkipsAnEntryAlreadyCreated: a pass whose cache did not yet show
// the entry its previous pass created plans the entry again; the live list
// holds it, so it needs no room. Counting it twice (the entry plus its
// need) evicted the least recently used other entry: a clean-clone CI run
// lost entry C of BudgetNeverEvictsAnEntryBeingCloned so (3 evicted, want 2).
func TestEvictSkipsAnEntryAlreadyCreated(t *testing.T) {
	size := resource.MustParse("1Mi")
	o := importer.Owner{Key: system.Key{Namespace: "ns", Name: "vm-c"}, UID: "uid-c"}
	var objs []runtime.Object
	for i, name := range []string{"redfish-image-c", "redfish-image-d"} {
		dv := entryDataVolume(o, system.MediaSlot{Slot: "cd0", CacheKey: name, Image: "http://x/" + name}, name, download.Validators{ETag: `"1"`}, "", size, "")
		dv.CreationTimestamp = metav1.NewTime(time.Unix(int64(1000+i), 0))
		dv.Status.Phase = cdiv1beta1.Succeeded
		u, err := unstructuredDataVolume(dv)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	scheme := runtime.NewScheme()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{DataVolumeResource: DataVolumeKind + "List"}, objs...)
	counts := &countEvicted{}
	c := &cdiImporter{d: importer.Deps{
		Dynamic: dyn, Kube: kubefake.NewClientset(), Options: importer.Options{ImageCacheBudget: size.Value() * 5 / 2},
		Cache: &importer.Cache{}, Counters: counts,
	}}
	if err := c.evict(logctx.Into(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil))), "ns", "redfish-image-d", size); err != nil {
		t.Fatal(err)
	}
	if got := counts.evicted; got != 0 {
		t.Errorf("%d entries evicted making room for an entry that exists, want 0", got)
	}
	l, err := dyn.Resource(DataVolumeResource).Namespace("ns").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 2 {
		t.Errorf("%d entries left, want 2: %v", len(l.Items), dataVolumeNames(l.Items))
	}
	// The control case of the same function: a new entry does need room.
	if err := c.evict(logctx.Into(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil))), "ns", "redfish-image-e", size); err != nil {
		t.Fatal(err)
	}
	if got := counts.evicted; got != 1 {
		t.Errorf("%d entries evicted making room for a new one, want 1", got)
	}
}

func dataVolumeNames(items []unstructured.Unstructured) []string {
	var out []string
	for _, u := range items {
		out = append(out, u.GetName())
	}
	return out
}

// countEvicted counts the evictions.
type countEvicted struct{ evicted int }

func (c *countEvicted) PodCreated()        {}
func (c *countEvicted) ClaimCreated()      {}
func (c *countEvicted) StalePodDeleted()   {}
func (c *countEvicted) CacheEntryEvicted() { c.evicted++ }
