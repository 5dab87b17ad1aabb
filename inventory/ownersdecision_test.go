package inventory

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestVMOwnersDecision: a decision made from a VM version's managedFields
// is kept beside them for every VM of a fleet larger than the bounded memo
// it replaced (4096 VMs: past it, a round robin over the fleet decided
// afresh on every read), made again for a new version, and not made for a
// version whose managedFields are not kept.
func TestVMOwnersDecision(t *testing.T) {
	const vms = 5000
	inv := &Inventory{owners: vmOwners{m: map[system.Key]vmOwnersEntry{}}}
	keep := func(i int, rv string) system.Key {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine"}}
		u.SetNamespace("ns")
		u.SetName(fmt.Sprintf("vm-%d", i))
		u.SetResourceVersion(rv)
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "redfish-boot", Operation: metav1.ManagedFieldsOperationApply,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:runStrategy":{}}}`)}})
		if _, err := inv.trimVM(u); err != nil {
			t.Fatalf("trimVM: %v", err)
		}
		return system.Key{Namespace: "ns", Name: u.GetName()}
	}
	keys := make([]system.Key, vms)
	for i := range keys {
		keys[i] = keep(i, "1")
	}
	decided := 0
	decide := func() any { decided++; return decided }
	for round := range 2 { // Ironic's power sync: every node, round robin
		for _, key := range keys {
			if _, ok := inv.VMOwnersDecision(key, "1", decide); !ok {
				t.Fatalf("round %d: no decision for %s at its kept version", round, key)
			}
		}
	}
	if decided != vms {
		t.Errorf("two rounds over %d VMs decided %d times, want once per VM (%d)", vms, decided, vms)
	}

	keep(0, "2")
	decided = 0
	if d, ok := inv.VMOwnersDecision(keys[0], "2", decide); !ok || decided != 1 || d != 1 {
		t.Errorf("new version: decision %v (known %v) after %d decisions, want decided afresh", d, ok, decided)
	}
	if _, ok := inv.VMOwnersDecision(keys[0], "1", decide); ok || decided != 1 {
		t.Errorf("old version answered (known %v, %d decisions), want unknown and not decided", ok, decided)
	}
	if _, ok := inv.VMOwnersDecision(system.Key{Namespace: "ns", Name: "absent"}, "1", decide); ok {
		t.Error("a VM not kept answered")
	}
}
