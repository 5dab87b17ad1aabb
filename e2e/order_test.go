package e2e

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// orderRecorder watches VMs and VMIs and records, per VM name, the etcd
// revision (resourceVersion) at which its media slot was first seen Ready
// and at which its first VMI was created. One etcd serves every resource,
// so the two revisions are comparable: it proves the import completed
// before the VMI existed, without relying on clocks.
type orderRecorder struct {
	mu         sync.Mutex
	readyRV    map[string]int64
	vmiAddedRV map[string]int64
	deferred   map[string]bool // a power-on was seen deferred behind an import
	stop       func()
}

func recordOrder(t *testing.T, a admin) *orderRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r := &orderRecorder{readyRV: map[string]int64{}, vmiAddedRV: map[string]int64{}, deferred: map[string]bool{}, stop: cancel}
	t.Cleanup(cancel)
	vms := watchFromNow(ctx, t, a, kubevirt.VirtualMachines)
	vmis := watchFromNow(ctx, t, a, kubevirt.VirtualMachineInstances)
	go r.run(ctx, vms, func(ev watch.Event, u *unstructured.Unstructured, rv int64) {
		if slotPhase(u) == system.MediaReady {
			r.first(r.readyRV, u.GetName(), rv)
		}
		var p system.PowerIntent
		if raw, ok := u.GetAnnotations()[apply.AnnotationPower]; ok && jsonUnmarshal(raw, &p) == nil && p.OnDeferred {
			r.mu.Lock()
			r.deferred[u.GetName()] = true
			r.mu.Unlock()
		}
	})
	go r.run(ctx, vmis, func(ev watch.Event, u *unstructured.Unstructured, rv int64) {
		if ev.Type == watch.Added {
			r.first(r.vmiAddedRV, u.GetName(), rv)
		}
	})
	return r
}

// watchFromNow watches the sample namespace's objects of res from the
// revision of a List: only what happens from now on is seen, not an ADDED
// per existing object (a VMI left running by an earlier test is not the
// first VMI of this one).
func watchFromNow(ctx context.Context, t *testing.T, a admin, res schema.GroupVersionResource) watch.Interface {
	t.Helper()
	ri := a.dyn.Resource(res).Namespace(demo.VMNamespace)
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list %s: %v", res.Resource, err)
	}
	w, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch %s: %v", res.Resource, err)
	}
	return w
}

func (r *orderRecorder) run(ctx context.Context, w watch.Interface, on func(watch.Event, *unstructured.Unstructured, int64)) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			u, isU := ev.Object.(*unstructured.Unstructured)
			if !isU {
				continue
			}
			rv, err := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
			if err != nil {
				continue
			}
			on(ev, u, rv)
		}
	}
}

func (r *orderRecorder) first(m map[string]int64, name string, rv int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := m[name]; !ok {
		m[name] = rv
	}
}

// wasDeferred reports whether a power-on of name was seen deferred.
func (r *orderRecorder) wasDeferred(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.deferred[name]
}

// revisions returns the recorded Ready and VMI-created revisions of name
// (0 when not seen).
func (r *orderRecorder) revisions(name string) (ready, vmiAdded int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.readyRV[name], r.vmiAddedRV[name]
}

// slotPhase is the media phase of a VM, without failing: Ready when every
// slot recorded in its annotations (cd0, usb0, httpboot) is Ready, else
// the phase of the first one that is not.
func slotPhase(vm *unstructured.Unstructured) system.MediaPhase {
	phase := system.MediaEmpty
	for k, raw := range vm.GetAnnotations() {
		if !strings.HasPrefix(k, apply.AnnotationMediaPrefix) {
			continue
		}
		var s system.MediaSlot
		_ = jsonUnmarshal(raw, &s)
		if s.Phase != system.MediaReady {
			return s.Phase
		}
		phase = s.Phase
	}
	return phase
}
