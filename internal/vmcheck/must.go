package vmcheck

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/system"
)

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
