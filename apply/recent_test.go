package apply

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

func objAt(rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetResourceVersion(rv)
	return u
}

// TestRecentMemory exercises the bookkeeping alone: which cached version
// is replaced by the remembered object, and when an entry goes away.
func TestRecentMemory(t *testing.T) {
	k := system.Key{Namespace: "ns", Name: "vm"}
	type op struct {
		remember [2]string // replaced, returned; empty: a resolve
		cached   string    // resolve: the cache's version
		want     string    // resolve: the version to use
	}
	rem := func(replaced, out string) op { return op{remember: [2]string{replaced, out}} }
	res := func(cached, want string) op { return op{cached: cached, want: want} }
	tests := []struct {
		name string
		ops  []op
	}{
		{"nothing remembered", []op{res("1", "1")}},
		{"cache behind our write", []op{rem("1", "2"), res("1", "2"), res("1", "2")}},
		{"cache caught up drops the entry", []op{rem("1", "2"), res("2", "2"), res("1", "1")}},
		{"outside write trusted and entry dropped", []op{rem("1", "2"), res("7", "7"), res("1", "1")}},
		{"older unknown version trusted", []op{rem("5", "6"), res("4", "4")}},
		{"consecutive writes chain", []op{rem("1", "2"), rem("2", "3"), rem("3", "4"), res("1", "4"), res("3", "4"), res("2", "4")}},
		{"unrelated write restarts the chain", []op{rem("1", "2"), rem("5", "6"), res("5", "6"), res("1", "1")}},
		{"late finisher does not overwrite", []op{rem("1", "2"), rem("2", "3"), rem("1", "2"), res("1", "3")}},
		{"no precondition not remembered", []op{rem("", "2"), res("1", "1")}},
		{"no-op apply not remembered", []op{rem("1", "1"), res("1", "1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecent()
			for i, o := range tt.ops {
				if o.remember[1] != "" {
					r.remember(k, o.remember[0], objAt(o.remember[1]))
					continue
				}
				if got := r.resolve(k, objAt(o.cached)).GetResourceVersion(); got != o.want {
					t.Errorf("op %d: cache at %s resolved to %s, want %s", i, o.cached, got, o.want)
				}
			}
		})
	}
	t.Run("chain is bounded", func(t *testing.T) {
		r := newRecent()
		for i := range recentChain + 2 {
			r.remember(k, fmt.Sprint(i), objAt(fmt.Sprint(i+1)))
		}
		if got := r.resolve(k, objAt("2")).GetResourceVersion(); got != fmt.Sprint(recentChain+2) {
			t.Errorf("recent link: got %s", got)
		}
		if got := r.resolve(k, objAt("0")).GetResourceVersion(); got != "0" {
			t.Errorf("link beyond the bound still resolved to %s", got)
		}
	})
	t.Run("entries expire", func(t *testing.T) {
		r := newRecent()
		now := time.Unix(1000, 0)
		r.now = func() time.Time { return now }
		r.remember(k, "1", objAt("2"))
		other := system.Key{Namespace: "ns", Name: "gone"}
		r.remember(other, "1", objAt("2"))
		now = now.Add(recentTTL + time.Second)
		if got := r.resolve(k, objAt("1")).GetResourceVersion(); got != "1" {
			t.Errorf("expired entry used: %s", got)
		}
		r.remember(k, "3", objAt("4")) // sweeps
		if _, ok := r.entries[other]; ok || len(r.entries) != 1 {
			t.Errorf("entries after the sweep: %d (deleted VM's kept: %v)", len(r.entries), ok)
		}
	})
	t.Run("entries are capped", func(t *testing.T) {
		r := newRecent()
		for i := range recentMax + 10 {
			r.remember(system.Key{Namespace: "ns", Name: fmt.Sprint(i)}, "1", objAt("2"))
		}
		if len(r.entries) != recentMax {
			t.Errorf("entries %d, want the cap %d", len(r.entries), recentMax)
		}
	})
	t.Run("nil remembers nothing", func(t *testing.T) {
		var r *recent
		r.remember(k, "1", objAt("2"))
		if got := r.resolve(k, objAt("1")).GetResourceVersion(); got != "1" {
			t.Errorf("nil resolved to %s", got)
		}
	})
}

// TestRecent proves read-your-own-writes on a real apiserver, once per CRD
// variant.
func TestRecent(t *testing.T) {
	forEachVariant(t, func(t *testing.T, c *testcluster.Cluster) {
		t.Run("own writes not yet cached", func(t *testing.T) { testOwnWrites(t, newEnv(t, c)) })
		t.Run("outside write is trusted", func(t *testing.T) { testOutsideTrusted(t, newEnv(t, c)) })
	})
}

func conflicts(w *Client) int64 {
	var n int64
	for _, s := range w.Stats() {
		n += s.Conflicts
	}
	return n
}

// testOwnWrites: the cache keeps serving the version read before the
// Client's first apply. Three more calls (spec, spec, status subresource)
// then apply without a single 409; without the memory the second call
// alone already gets one.
func testOwnWrites(t *testing.T, e *env) {
	ctx := t.Context()
	for _, withMemory := range []bool{true, false} {
		t.Run(fmt.Sprintf("memory=%v", withMemory), func(t *testing.T) {
			key := e.createVM(t, fmt.Sprintf("own-%v", withMemory))
			w := New(e.bridge, staleCache{e.get(t, key)}, e.mode, Options{})
			if !withMemory {
				w.recent = nil
			}
			noErr(t)(w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootHdd, Enabled: system.BootContinuous})))
			if n := conflicts(w); n != 0 {
				t.Fatalf("first apply on a current cache: %d conflicts", n)
			}
			noErr(t)(w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootPxe, Enabled: system.BootOnce})))
			if !withMemory {
				if n := conflicts(w); n != 1 {
					t.Errorf("without the memory: %d conflicts after the second call, want 1", n)
				}
				return
			}
			noErr(t)(w.Power(ctx, key, func(_ *VM, p *PowerChange) error { p.RunStrategy = "Always"; return nil }))
			vm, err := w.StateChange(ctx, key, appendReq(kubevirt.StateChangeRequest{Action: kubevirt.StartRequest}))
			if err != nil {
				t.Fatal(err)
			}
			if n := conflicts(w); n != 0 {
				t.Errorf("%d conflicts with the cache behind our own writes, want 0; stats %+v", n, w.Stats())
			}
			got := e.get(t, key)
			if got.GetResourceVersion() != vm.Object.GetResourceVersion() {
				t.Errorf("last call returned version %s, server has %s", vm.Object.GetResourceVersion(), got.GetResourceVersion())
			}
			final := Decode(t.Context(), key, got, nil)
			rs, _, _ := unstructured.NestedString(got.Object, kubevirt.RunStrategy...)
			if final.Boot.Target != system.BootPxe || rs != "Always" || len(kubevirt.StateChangeRequestsOf(final.Object)) != 1 {
				t.Errorf("server state: boot %+v runStrategy %q requests %v", final.Boot, rs, kubevirt.StateChangeRequestsOf(final.Object))
			}
		})
	}
}

// swapCache serves whatever the test last put in vm.
type swapCache struct{ vm *unstructured.Unstructured }

func (s *swapCache) VM(system.Key) (*unstructured.Unstructured, error) { return s.vm, nil }
func (s *swapCache) VMI(system.Key) (*unstructured.Unstructured, error) {
	return staleCache{}.VMI(system.Key{})
}

// testOutsideTrusted: after the Client's own write another writer changes
// the VM; a cache showing that version is used as is (the change is seen,
// nothing conflicts) and the memory is dropped, so a cache later serving
// the version our write replaced gets the ordinary 409 and live retry.
func testOutsideTrusted(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "outside")
	before := e.get(t, key)
	cache := &swapCache{vm: before}
	w := New(e.bridge, cache, e.mode, Options{})
	noErr(t)(w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootHdd, Enabled: system.BootContinuous})))
	patch := []byte(`{"metadata":{"labels":{"touched":"yes"}}}`)
	outside, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "other"})
	if err != nil {
		t.Fatal(err)
	}
	cache.vm = outside
	var seen string
	noErr(t)(w.Power(ctx, key, func(vm *VM, p *PowerChange) error {
		seen = vm.Object.GetLabels()["touched"]
		p.RunStrategy = "Always"
		return nil
	}))
	if seen != "yes" || conflicts(w) != 0 {
		t.Errorf("cache with an outside write: label seen %q, conflicts %d; want yes, 0", seen, conflicts(w))
	}
	cache.vm = before
	noErr(t)(w.Boot(ctx, key, setBoot(system.BootOverride{Target: system.BootPxe, Enabled: system.BootOnce})))
	want := Counters{Applies: 2, Conflicts: 1, Retries: 1}
	if diff := cmp.Diff(want, w.Stats()[ManagerBoot]); diff != "" {
		t.Errorf("boot counters after the memory was dropped (-want +got):\n%s", diff)
	}
}
