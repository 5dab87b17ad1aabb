package vmcheck

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// MustVM reads the VirtualMachine key live from the apiserver, failing tb
// when it cannot.
func MustVM(tb testing.TB, dyn dynamic.Interface, key system.Key) *unstructured.Unstructured {
	tb.Helper()
	vm, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(tb.Context(), key.Name, metav1.GetOptions{})
	if err != nil {
		tb.Fatalf("get VM %s: %v", key, err)
	}
	return vm
}

// MustVMI reads key's VirtualMachineInstance live, nil when there is none;
// any other error fails tb.
func MustVMI(tb testing.TB, dyn dynamic.Interface, key system.Key) *unstructured.Unstructured {
	tb.Helper()
	vmi, err := dyn.Resource(kubevirt.VirtualMachineInstances).Namespace(key.Namespace).Get(tb.Context(), key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		tb.Fatalf("get VMI %s: %v", key, err)
	}
	return vmi
}

// MustTemplateSpec is TemplateSpec failing tb on an error.
func MustTemplateSpec(tb testing.TB, vm *unstructured.Unstructured) map[string]any {
	tb.Helper()
	spec, err := TemplateSpec(vm)
	if err != nil {
		tb.Fatal(err)
	}
	return spec
}

// MustSlot is Slot failing tb on an error.
func MustSlot(tb testing.TB, vm *unstructured.Unstructured, slot string) system.MediaSlot {
	tb.Helper()
	s, err := Slot(vm, slot)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// MustFileSHA256 is FileSHA256 failing tb on an error.
func MustFileSHA256(tb testing.TB, path string) string {
	tb.Helper()
	sum, err := FileSHA256(path)
	if err != nil {
		tb.Fatalf("imported image: %v", err)
	}
	return sum
}
