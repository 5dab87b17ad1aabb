package apply

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// untrimmedCache hides the inventory's VMManagedFields: a Writer over it
// takes the trimmed cached VMs for complete ones (the negative control).
type untrimmedCache struct{ inv *inventory.Inventory }

func (c untrimmedCache) VM(key system.Key) (*unstructured.Unstructured, error) { return c.inv.VM(key) }
func (c untrimmedCache) VMI(key system.Key) (*unstructured.Unstructured, error) {
	return c.inv.VMI(key)
}

// TestOwnershipFromTrimmedCache: the inventory's cached VMs carry no
// managedFields, and the Writer's ownership decisions still see them (kept
// aside per version). The decision checked: an intent-only power change
// re-sends runStrategy because redfish-power owns it; decided on a VM
// without managedFields it would leave runStrategy out and SSA would
// delete it from the VM. The negative control runs the same steps over
// the cache without the kept managedFields and sees runStrategy deleted.
func TestOwnershipFromTrimmedCache(t *testing.T) {
	forEachVariant(t, func(t *testing.T, c *testcluster.Cluster) {
		for _, control := range []bool{false, true} {
			name := "trimmed cache with managedFields aside"
			if control {
				name = "negative control: trimmed cache alone"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, c)
				kube, err := kubernetes.NewForConfig(c.Bridge)
				if err != nil {
					t.Fatal(err)
				}
				inv, err := inventory.Start(t.Context(), e.bridge, kube, []string{e.ns})
				if err != nil {
					t.Fatal(err)
				}
				var cache Cache = inv
				if control {
					cache = untrimmedCache{inv}
				}
				w := New(e.bridge, cache, e.mode, Options{})
				key := e.createVM(t, "owned")
				out, err := w.Power(t.Context(), key, func(_ *VM, p *PowerChange) error {
					p.RunStrategy = "Always"
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				// Until the cache shows the apply, reads answer the apply's own
				// answer (recent.go), managedFields and all: wait for it.
				waitCached(t, inv, key, out.Object.GetResourceVersion())
				cached, err := inv.VM(key)
				if err != nil {
					t.Fatal(err)
				}
				if mf := cached.GetManagedFields(); len(mf) != 0 {
					t.Fatalf("the cached VM carries %d managedFields entries, want none", len(mf))
				}
				read, err := w.Read(t.Context(), key)
				if err != nil {
					t.Fatal(err)
				}
				// Each cache read unpacks a new object (inventory.VM): the
				// same content, not the same pointer.
				if !reflect.DeepEqual(read.Object.Object, cached.Object) {
					t.Fatalf("the Writer's read is not the cached VM")
				}
				if !control && !owns(read, ManagerPower, "spec", "runStrategy") {
					t.Errorf("from the cached read, redfish-power does not own spec.runStrategy; live it owns %v", e.ownedBy(t, key, ManagerPower))
				}

				if _, err := w.Power(t.Context(), key, func(_ *VM, p *PowerChange) error {
					p.Intent = system.PowerIntent{OnDeferred: true, DeferredAt: time.Now().UTC().Truncate(time.Second)}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				rs, _, _ := unstructured.NestedString(e.get(t, key).Object, "spec", "runStrategy")
				switch {
				case !control && rs != "Always":
					t.Errorf("after an intent-only power change runStrategy is %q, want Always (redfish-power owns: %v)", rs, e.ownedBy(t, key, ManagerPower))
				case control && rs != "":
					t.Errorf("negative control: runStrategy %q survived an apply decided without managedFields; the test cannot tell", rs)
				}
			})
		}
	})
}

// waitCached waits until the inventory shows VM key at resourceVersion rv.
func waitCached(t *testing.T, inv *inventory.Inventory, key system.Key, rv string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if u, err := inv.VM(key); err == nil && u.GetResourceVersion() == rv {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache never showed %s at resourceVersion %s", key, rv)
		}
	}
}
