package apply

import (
	"github.com/redfish-bridge/redfish-bridge/kubevirt"

	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// DetectMode reads the installed VirtualMachine CRD's storage version schema
// and returns [ModeMap] iff both T.domain.devices.disks and T.volumes declare
// x-kubernetes-list-type: map keyed by name alone; [ModeAtomic] otherwise.
// It logs the result.
func DetectMode(ctx context.Context, dyn dynamic.Interface) (Mode, error) {
	crd, err := dyn.Resource(kubevirt.CRDResource).Get(ctx, kubevirt.CRDName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("detect list mode: get CRD %s: %w", kubevirt.CRDName, err)
	}
	mode, version, err := ModeOf(crd)
	if err != nil {
		return "", err
	}
	logctx.From(ctx).Info("VirtualMachine list mode detected", "mode", mode, "crd", kubevirt.CRDName, "version", version)
	return mode, nil
}

// ModeOf is DetectMode on a CRD already read; it also returns the version
// whose schema decided.
func ModeOf(crd *unstructured.Unstructured) (Mode, string, error) {
	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		return "", "", fmt.Errorf("detect list mode: %s spec.versions: %w", crd.GetName(), err)
	}
	for _, v := range versions {
		vm, ok := v.(map[string]any)
		if !ok || vm["storage"] != true {
			continue
		}
		name, _ := vm["name"].(string)
		root, ok, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
		if !ok {
			return "", name, fmt.Errorf("detect list mode: %s version %s has no schema", crd.GetName(), name)
		}
		if isNameKeyedMap(root, kubevirt.Disks) && isNameKeyedMap(root, kubevirt.Volumes) {
			return ModeMap, name, nil
		}
		return ModeAtomic, name, nil
	}
	return "", "", fmt.Errorf("detect list mode: %s has no storage version", crd.GetName())
}

// isNameKeyedMap walks properties along path and reports whether the list
// found there is x-kubernetes-list-type: map with map keys exactly [name].
func isNameKeyedMap(schemaNode map[string]any, path []string) bool {
	node := schemaNode
	for _, p := range path {
		next, ok, _ := unstructured.NestedMap(node, "properties", p)
		if !ok {
			return false
		}
		node = next
	}
	if node["x-kubernetes-list-type"] != "map" {
		return false
	}
	keys, _, _ := unstructured.NestedStringSlice(node, "x-kubernetes-list-map-keys")
	return len(keys) == 1 && keys[0] == kubevirt.KeyName
}
