package inventory

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestOwnerSetsShared: VMs carrying the same managedFields share one kept
// set (the entries VMManagedFields returns are the same memory), a VM with
// other managedFields gets its own, and a set is dropped when its last VM
// moves to another version's set or is deleted (no set outlives its VMs).
func TestOwnerSetsShared(t *testing.T) {
	inv := &Inventory{owners: vmOwners{m: map[system.Key]vmOwnersEntry{}}}
	vm := func(name, rv, fields string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine"}}
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetResourceVersion(rv)
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "redfish-power", Operation: metav1.ManagedFieldsOperationApply,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}})
		return u
	}
	keep := func(u *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
		t.Helper()
		if _, err := inv.trimVM(u); err != nil {
			t.Fatalf("trimVM: %v", err)
		}
		got, ok := inv.VMManagedFields(system.Key{Namespace: "ns", Name: u.GetName()}, u.GetResourceVersion())
		if !ok || len(got) != 1 || got[0].FieldsV1.GetRawString() != u.GetManagedFields()[0].FieldsV1.GetRawString() {
			t.Fatalf("VMManagedFields(%s@%s) = %v (known %v), want its managedFields", u.GetName(), u.GetResourceVersion(), got, ok)
		}
		return got
	}
	const run, template = `{"f:spec":{"f:runStrategy":{}}}`, `{"f:spec":{"f:template":{}}}`
	a, b := vm("a", "1", run), vm("b", "1", run)
	fa, fb := keep(a), keep(b)
	if &fa[0] != &fb[0] {
		t.Error("two VMs with the same managedFields keep two copies, want one shared")
	}
	c := vm("c", "1", template)
	if fc := keep(c); &fc[0] == &fa[0] {
		t.Error("a VM with other managedFields shares another VM's")
	}
	if n := len(inv.owners.sets.m); n != 2 {
		t.Errorf("%d sets kept for 2 distinct managedFields, want 2", n)
	}

	keep(vm("c", "2", run)) // c's new version: c's old set has no VM left
	if n := len(inv.owners.sets.m); n != 1 {
		t.Errorf("%d sets kept after the last VM of one moved on, want 1", n)
	}
	forget := inv.forgetOwners()
	for _, u := range []*unstructured.Unstructured{a, b, vm("c", "2", run)} {
		forget.OnDelete(u)
	}
	if n := len(inv.owners.sets.m); n != 0 || len(inv.owners.m) != 0 {
		t.Errorf("after every VM was deleted: %d sets and %d VMs kept, want none", n, len(inv.owners.m))
	}
}

// BenchmarkVMManagedFields is what the Writer's cached read pays for a
// VM's managedFields kept aside ([Inventory.VMManagedFields]), on the
// demo's vm-0 kept among 1000 VMs.
func BenchmarkVMManagedFields(b *testing.B) {
	inv := &Inventory{owners: vmOwners{m: map[system.Key]vmOwnersEntry{}}}
	vm := fixtureVM(b)
	for i := range 1000 {
		u := vm.DeepCopy()
		u.SetName(fmt.Sprintf("vm-%d", i))
		if _, err := inv.trimVM(u); err != nil {
			b.Fatal(err)
		}
	}
	key := system.Key{Namespace: vm.GetNamespace(), Name: "vm-500"}
	b.ReportAllocs()
	for b.Loop() {
		if mf, ok := inv.VMManagedFields(key, vm.GetResourceVersion()); !ok || len(mf) == 0 {
			b.Fatalf("VMManagedFields: %d entries (known %v)", len(mf), ok)
		}
	}
}
