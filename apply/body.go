package apply

import (
	"github.com/redfish-bridge/redfish-bridge/kubevirt"

	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// skeleton is the part every apply body shares: identity and the
// resourceVersion precondition.
func skeleton(vm *VM) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kubevirt.APIVersion,
		"kind":       kubevirt.Kind,
		"metadata": map[string]any{
			"name":            vm.Object.GetName(),
			"namespace":       vm.Object.GetNamespace(),
			"resourceVersion": vm.Object.GetResourceVersion(),
		},
	}}
}

// setAnnotation adds one annotation holding v as JSON.
func setAnnotation(body *unstructured.Unstructured, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode annotation %s: %w", key, err)
	}
	a := body.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = string(raw)
	body.SetAnnotations(a)
	return nil
}

// setList sets a list field of the body.
func setList(body *unstructured.Unstructured, elems []map[string]any, path []string) error {
	if err := unstructured.SetNestedSlice(body.Object, toSlice(elems), path...); err != nil {
		return fmt.Errorf("set %v: %w", path, err)
	}
	return nil
}

// sameList reports whether a computed list equals the list read.
func sameList(obj *unstructured.Unstructured, path []string, want []map[string]any) bool {
	return equality.Semantic.DeepEqual(list(obj, path), want)
}

// Body is one apply: the object to send and whether to force.
type Body struct {
	Object *unstructured.Unstructured
	Force  bool
	// Subresource is "" for the VM itself, "status" for its status.
	Subresource string
}
