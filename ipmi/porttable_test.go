package ipmi

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// vmMap is an Inventory of VMs by key, each with the given port annotation
// ("" for none).
type vmMap map[system.Key]string

func (m vmMap) vm(key system.Key) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	if v := m[key]; v != "" {
		u.SetAnnotations(map[string]string{PortAnnotation: v})
	}
	return u
}

func (m vmMap) ListVMs(string, labels.Selector) ([]metav1.Object, error) {
	out := make([]metav1.Object, 0, len(m))
	for key := range m {
		out = append(out, m.vm(key))
	}
	return out, nil
}

func (m vmMap) VM(key system.Key) (*unstructured.Unstructured, error) {
	if _, ok := m[key]; !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "vms"}, key.Name)
	}
	return m.vm(key), nil
}

func (m vmMap) AddVMHandler(func(system.Key)) (func() error, error) {
	return func() error { return nil }, nil
}

// TestPortTable: the port the Manager shows is the one the endpoint serves
// (Ports' rule): the annotation's when in range and not taken by a VM
// sorting first; none for a VM without one, one out of range, one whose
// port another VM has, an absent VM, or when IPMI is off.
func TestPortTable(t *testing.T) {
	k := func(ns, name string) system.Key { return system.Key{Namespace: ns, Name: name} }
	inv := vmMap{
		k("a", "vm9"): "6230",
		k("b", "vm1"): "6230",
		k("a", "vm2"): "6231",
		k("a", "vm3"): "99",
		k("a", "vm4"): "",
	}
	table := NewPortTable(Config{FirstPort: 6230, LastPort: 6239}, inv)
	for _, tt := range []struct {
		key  system.Key
		port int
		ok   bool
	}{
		{k("a", "vm9"), 6230, true},
		{k("a", "vm2"), 6231, true},
		{k("b", "vm1"), 0, false},
		{k("a", "vm3"), 0, false},
		{k("a", "vm4"), 0, false},
		{k("a", "absent"), 0, false},
	} {
		if port, ok := table.IPMIPort(tt.key); port != tt.port || ok != tt.ok {
			t.Errorf("%s: port %d, %v; want %d, %v", tt.key, port, ok, tt.port, tt.ok)
		}
	}
	if port, ok := NewPortTable(Config{}, inv).IPMIPort(k("a", "vm9")); ok {
		t.Errorf("IPMI off: port %d shown", port)
	}
}
