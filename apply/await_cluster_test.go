package apply

import (
	"context"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestAwaitReadsOwnWrite: after each of a Writer's applies, AwaitVersion
// returns once a read shows the write (woken by the inventory's change
// events), so the next read reads it. The Writer here has no memory of its
// own writes (recent.go), so only the wait makes the cached read current:
// without it reads right after the writes come back stale. A wait for
// what never comes returns at CacheWait, and at once when ctx ends.
func TestAwaitReadsOwnWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	e := newEnv(t, testcluster.ForTest(t, crds.Stock))
	kube, err := kubernetes.NewForConfig(e.cluster.Bridge)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Start(t.Context(), e.bridge, kube, []string{e.ns})
	if err != nil {
		t.Fatal(err)
	}
	w := New(e.bridge, inv, e.mode, Options{})
	w.recent = nil
	key := e.createVM(t, "await")
	waitCached(t, inv, key, e.get(t, key).GetResourceVersion())

	t.Run("reads its own write", func(t *testing.T) {
		stale := 0
		for i := range 10 {
			target := system.BootHdd
			if i%2 == 1 {
				target = system.BootPxe
			}
			out, err := w.Boot(t.Context(), key, setBoot(system.BootOverride{Target: target, Enabled: system.BootContinuous}))
			if err != nil {
				t.Fatal(err)
			}
			w.AwaitVersion(t.Context(), key, out)
			read, err := w.Read(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := strconv.ParseUint(out.Object.GetResourceVersion(), 10, 64)
			have, _ := strconv.ParseUint(read.Object.GetResourceVersion(), 10, 64)
			if have < want || read.Boot.Target != target {
				stale++
				t.Logf("write %d: read resourceVersion %d target %s, wrote %d target %s", i, have, read.Boot.Target, want, target)
			}
		}
		if stale != 0 {
			t.Errorf("%d of 10 reads right after a write did not read it", stale)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		start := time.Now()
		w.Await(t.Context(), key, func(*VM) bool { return false })
		if took := time.Since(start); took < CacheWait {
			t.Errorf("a wait for what never comes returned after %s, before CacheWait %s", took, CacheWait)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		done := make(chan struct{})
		go func() { defer close(done); w.Await(ctx, key, func(*VM) bool { return false }) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("a wait on an ended ctx did not return")
		}
	})
}
