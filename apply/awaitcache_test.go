package apply

import (
	"encoding/json"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestAwaitCacheWaitsForTheCache: a media write's 202 waits with
// AwaitCache until the cache itself shows the insert, not only Read (which
// answers with the Client's own write while the cache still serves the
// version it replaced, or reads live): the task of an insert is found by
// scanning the cached Systems, so a 202 sent before the cache shows the
// insert let the client's next request miss its task (e2e
// TestProtocolConformance/*/task_target_under_the_manager got a 404).
// Here the cache lags behind the Client's remembered write until a read
// of the wait has seen it lag (the watch delivers then); done records
// whether the cache showed the write when it held.
func TestAwaitCacheWaitsForTheCache(t *testing.T) {
	before := baseVM(t)
	before.SetResourceVersion("1")
	written := before.DeepCopy()
	written.SetResourceVersion("2")
	slot := readySlot()
	raw, err := json.Marshal(slot)
	if err != nil {
		t.Fatal(err)
	}
	written.SetAnnotations(map[string]string{AnnotationMediaPrefix + slot.Slot: string(raw)})
	key := system.Key{Namespace: before.GetNamespace(), Name: before.GetName()}

	cache := newLaggingCache(before)
	c := New(nil, cache, ModeAtomic, Options{})
	c.recent.remember(key, "1", written)
	if vm, err := c.Read(t.Context(), key); err != nil || vm.Slots[slot.Slot].InsertID != slot.InsertID {
		t.Fatalf("Read = %v, %v; want the Client's own write (the premise)", vm, err)
	}

	var cached bool
	c.AwaitCache(t.Context(), key, func(vm *VM) bool {
		if vm.Slots[slot.Slot].InsertID != slot.InsertID {
			cache.set(written) // the watch delivers the write now
			return false
		}
		cached = cache.shows("2")
		return true
	})
	if !cached {
		t.Error("AwaitCache returned on the Client's own write while the cache still served the version it replaced")
	}
}

// laggingCache is a Cache and Notifier holding one VM and no VMI.
type laggingCache struct {
	mu      sync.Mutex
	vm      *unstructured.Unstructured
	changed chan struct{}
}

func newLaggingCache(vm *unstructured.Unstructured) *laggingCache {
	return &laggingCache{vm: vm, changed: make(chan struct{})}
}

func (l *laggingCache) VM(system.Key) (*unstructured.Unstructured, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.vm, nil
}

func (l *laggingCache) VMI(key system.Key) (*unstructured.Unstructured, error) {
	return nil, apierrors.NewNotFound(kubevirt.VirtualMachineInstances.GroupResource(), key.Name)
}

func (l *laggingCache) Changed(system.Key) (<-chan struct{}, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed, func() {}
}

func (l *laggingCache) set(vm *unstructured.Unstructured) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.vm = vm
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *laggingCache) shows(resourceVersion string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.vm.GetResourceVersion() == resourceVersion
}
