package inventory

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestMembership checks, on a real apiserver and both CRD variants, that
// Membership moves on a VM added, relabelled or deleted, once ListVMs
// shows the change, and not on other changes: the Systems collection is
// kept while it stays the same.
func TestMembership(t *testing.T) {
	eachVariant(t, func(t *testing.T, c *testcluster.Cluster) {
		ctx := t.Context()
		cl := newTestClients(t, c)
		if err := c.CreateNamespace(ctx, "members"); err != nil {
			t.Fatal(err)
		}
		inv, err := Start(ctx, cl.bridge, cl.bridgeKube, []string{"members"})
		if err != nil {
			t.Fatal(err)
		}
		vms := cl.admin.Resource(kubevirt.VirtualMachines).Namespace("members")
		// settled waits until Membership moved past from, then checks
		// that ListVMs shows want VMs and that it moved by exactly by.
		settled := func(step string, from uint64, by uint64, want int) uint64 {
			t.Helper()
			var now uint64
			testutil.Eventually(t, step+": Membership moves", 10*time.Second, 5*time.Millisecond, func(context.Context) error {
				if now = inv.Membership(); now < from+by {
					return fmt.Errorf("Membership %d, want %d", now, from+by)
				}
				return nil
			})
			if now != from+by {
				t.Errorf("%s: Membership moved by %d, want %d", step, now-from, by)
			}
			got, err := inv.ListVMs("members", nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != want {
				t.Errorf("%s: Membership moved but ListVMs shows %d VMs, want %d", step, len(got), want)
			}
			return now
		}
		m := inv.Membership()
		if _, err := vms.Create(ctx, vm("members", "a", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		m = settled("create a", m, 1, 1)
		if _, err := vms.Create(ctx, vm("members", "b", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		m = settled("create b", m, 1, 2)
		// A spec change of a, then a label change of b: events arrive in
		// order, so when b's change moved Membership, a's had been seen;
		// it must not have moved it.
		if _, err := vms.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"runStrategy":"Always"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := vms.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := vms.Patch(ctx, "b", types.MergePatchType, []byte(`{"metadata":{"labels":{"pool":"x"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		m = settled("spec and annotation of a, label of b", m, 1, 2)
		if err := vms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		settled("delete a", m, 1, 1)
		if _, err := inv.VM(system.Key{Namespace: "members", Name: "b"}); err != nil {
			t.Errorf("VM b: %v", err)
		}
	})
}
