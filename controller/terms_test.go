package controller_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/controller"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// counting wraps the inventory's VM events: each term's handler counts its
// calls, so a handler left behind by an ended term is seen firing.
type counting struct {
	inv   *inventory.Inventory
	calls []*atomic.Int64 // by term
}

func (c *counting) AddVMHandler(handle func(system.Key)) (func() error, error) {
	n := &atomic.Int64{}
	c.calls = append(c.calls, n)
	return c.inv.AddVMHandler(func(k system.Key) {
		n.Add(1)
		handle(k)
	})
}

// TestTermsRemoveHandlers: three leadership terms of a controller on a
// real apiserver's VM informers. Each term registers its VM handler (the
// replay reaches its reconciler) and removes it when it ends: the
// inventory holds one handler during a term and none after, and the ended
// terms' handlers do not fire on a later VM change (before the engine
// removed them, every term added handlers for good).
func TestTermsRemoveHandlers(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	c := testcluster.ForTest(t, crds.Stock)
	ctx := t.Context()
	const ns = "terms"
	if err := c.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	admin := dynamic.NewForConfigOrDie(c.Admin)
	vms := admin.Resource(kubevirt.VirtualMachines).Namespace(ns)
	if _, err := vms.Create(ctx, testutil.VM(ns, "vm", "Halted"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Start(ctx, admin, kubernetes.NewForConfigOrDie(c.Admin), []string{ns})
	if err != nil {
		t.Fatal(err)
	}
	feed := &counting{inv: inv}
	ctrl := controller.New("test", controller.Options{Workers: 2})
	seen := make(chan system.Key, 64)
	r := controller.ReconcileFunc(func(_ context.Context, k system.Key) (controller.Result, error) {
		seen <- k
		return controller.Result{}, nil
	})
	key := system.Key{Namespace: ns, Name: "vm"}
	wait := func(what string) {
		t.Helper()
		select {
		case k := <-seen:
			if k != key {
				t.Fatalf("%s: reconciled %s, want %s", what, k, key)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s: no pass", what)
		}
	}
	var ended []int64 // each ended term's handler calls when it ended
	for term := 1; term <= 3; term++ {
		tctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- ctrl.Run(tctx, r, controller.VMEvents(feed)) }()
		wait(fmt.Sprintf("term %d replay", term))
		if n := inv.VMHandlers(); n != 1 {
			t.Errorf("term %d: %d VM handlers registered, want 1", term, n)
		}
		if term == 3 {
			// A change while term 3 runs reaches its handler; the
			// ended terms' handlers must not see it.
			before := feed.calls[2].Load()
			patch := []byte(`{"metadata":{"labels":{"touched":"yes"}}}`)
			if _, err := vms.Patch(ctx, "vm", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, "term 3's handler sees the change", 2*time.Minute, 10*time.Millisecond,
				testutil.Holds(func() (bool, string) {
					n := feed.calls[2].Load()
					return n > before, fmt.Sprintf("%d calls", n)
				}))
			wait("term 3 change")
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("term %d: %v", term, err)
		}
		ended = append(ended, feed.calls[term-1].Load())
		if n := inv.VMHandlers(); n != 0 {
			t.Errorf("after term %d: %d VM handlers registered, want 0 (registrations grow with every term)", term, n)
		}
	}
	for i, n := range ended[:2] {
		if got := feed.calls[i].Load(); got != n {
			t.Errorf("term %d's handler fired %d times after its term ended", i+1, got-n)
		}
	}
	if st := ctrl.Stats(); st.Successes < 4 || st.Running {
		t.Errorf("stats over the terms %+v, want at least 4 passes (3 replays and the change) and not running", st)
	}
}
