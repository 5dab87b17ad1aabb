package inventory

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// The fixtures in testdata/ are real objects of `make demo` (KubeVirt's
// virt-controller v1.9.0 and the simulated node), read with kubectl
// --show-managed-fields: vm-0 powered on with a CD inserted (vm.json), its
// running VMI (vmi.json) and the CD's image PVC (pvc.json).

// cacheSizeN is how many copies of a fixture one measurement caches: enough
// that a GC's noise is small per object.
const cacheSizeN = 2000

// cachedSize is what one object of a fixture costs in its informer cache.
type cachedSize struct {
	// heap is the live heap per object: decoded from its JSON as the
	// informer's watch decodes it, through the informer's transform, stored
	// in an indexer like the informer's, everything kept aside included.
	heap float64
	// json and jsonNoManaged are the fixture's compact JSON, with and
	// without managedFields.
	json, jsonNoManaged int
}

// measureCached caches cacheSizeN copies (distinct names and versions) of
// the fixture file through decode and transform and reports the live heap
// they add, per object. vary, when not nil, changes copy i before its
// transform.
func measureCached(t *testing.T, file string, decode func(raw []byte) (metav1.Object, error), transform cache.TransformFunc, vary func(o metav1.Object, i int)) cachedSize {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	compact, _ := json.Marshal(m)
	delete(m["metadata"].(map[string]any), "managedFields")
	noManaged, _ := json.Marshal(m)
	size := cachedSize{json: len(compact), jsonNoManaged: len(noManaged)}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	before := liveHeap()
	for i := range cacheSizeN {
		o, err := decode(compact)
		if err != nil {
			t.Fatal(err)
		}
		o.SetName(fmt.Sprintf("%s-%d", o.GetName(), i))
		o.SetResourceVersion(fmt.Sprint(1000 + i))
		if vary != nil {
			vary(o, i)
		}
		obj, err := transform(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	size.heap = float64(liveHeap()-before) / cacheSizeN
	runtime.KeepAlive(store)
	return size
}

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// trimMeta drops managedFields and the last-applied annotation.
func trimMeta(o metav1.Object) {
	o.SetManagedFields(nil)
	if a := o.GetAnnotations(); a != nil {
		if _, ok := a[lastApplied]; ok {
			delete(a, lastApplied)
			o.SetAnnotations(a)
		}
	}
}

// trimOnly drops managedFields and the last-applied annotation, nothing
// else (the typed comparison).
func trimOnly(obj any) (any, error) {
	trimMeta(obj.(metav1.Object))
	return obj, nil
}

// wholeAside is the VM informer's transform before CompactVM (the
// comparison): the whole VM cached without managedFields, which are kept
// aside whole in aside.
func wholeAside(aside *[][]metav1.ManagedFieldsEntry) cache.TransformFunc {
	return func(obj any) (any, error) {
		*aside = append(*aside, obj.(metav1.Object).GetManagedFields())
		return trimOnly(obj)
	}
}

func decodeUnstructured(raw []byte) (metav1.Object, error) {
	obj, err := k8sruntime.Decode(unstructured.UnstructuredJSONScheme, raw)
	if err != nil {
		return nil, err
	}
	return obj.(*unstructured.Unstructured), nil
}

func decodeTypedVM(raw []byte) (metav1.Object, error) {
	var vm kubevirtv1.VirtualMachine
	if err := json.Unmarshal(raw, &vm); err != nil {
		return nil, err
	}
	return &vm, nil
}

func decodePVC(raw []byte) (metav1.Object, error) {
	var pvc corev1.PersistentVolumeClaim
	if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, &pvc); err != nil {
		return nil, err
	}
	return &pvc, nil
}

// distinctOwners gives copy i of a VM managedFields no other copy has: the
// managers not the bridge's get i in their names (the worst case of the
// managedFields kept aside: each VM's set its own, no set shared).
func distinctOwners(o metav1.Object, i int) {
	mf := o.GetManagedFields()
	for j := range mf {
		if !bridgeManagers[mf[j].Manager] {
			mf[j].Manager = fmt.Sprintf("%s-%d", mf[j].Manager, i)
		}
	}
	o.SetManagedFields(mf)
}

// TestCachedBytesPerObject measures what a VM, a VMI and a PVC cost in the
// caches (the figures docs/configuration.md and docs/bench.md give) and holds
// each under its bound. Run it alone: the heap is the process's.
func TestCachedBytesPerObject(t *testing.T) {
	inv := &Inventory{owners: vmOwners{m: map[system.Key]vmOwnersEntry{}}}
	var aside [][]metav1.ManagedFieldsEntry
	tests := []struct {
		name      string
		file      string
		decode    func([]byte) (metav1.Object, error)
		transform cache.TransformFunc
		vary      func(metav1.Object, int)
		max       float64 // bytes of heap per object
	}{
		{"VM", "vm.json", decodeUnstructured, inv.trimVM, nil, 1500},
		// Every VM's managedFields its own (no set shared).
		{"VM with managedFields distinct per VM (worst case)", "vm.json", decodeUnstructured, inv.trimVM, distinctOwners, 2450},
		// For comparison (not what the caches hold): the VM as cached before
		// CompactVM (whole, managedFields kept aside whole), and decoded once
		// into KubeVirt's typed struct, without managedFields.
		{"VM whole with managedFields aside (comparison, before CompactVM)", "vm.json", decodeUnstructured, wholeAside(&aside), nil, 20000},
		{"VM as typed kubevirtv1.VirtualMachine (comparison)", "vm.json", decodeTypedVM, trimOnly, nil, 20000},
		{"VMI", "vmi.json", decodeUnstructured, trimVMI, nil, 850},
		{"PVC", "pvc.json", decodePVC, trimPVC, nil, 750},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := measureCached(t, tt.file, tt.decode, tt.transform, tt.vary)
			t.Logf("%s: %.0f B of heap per cached object (JSON %d B, %d B without managedFields)", tt.name, got.heap, got.json, got.jsonNoManaged)
			if got.heap > tt.max {
				t.Errorf("%s: %.0f B of heap per cached object, want <= %.0f", tt.name, got.heap, tt.max)
			}
		})
	}
	runtime.KeepAlive(inv)
	runtime.KeepAlive(aside)
}
