package testutil

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// VM is a minimal valid VirtualMachine as an outside author writes it: a
// containerDisk root disk, 1Gi of guest memory, one masquerade interface
// on the pod network, the template labelled app=name, and runStrategy.
// Each call returns a fresh object the caller may change.
func VM(namespace, name, runStrategy string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1",
		"kind":       "VirtualMachine",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"runStrategy": runStrategy,
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{
					"domain": map[string]any{
						"memory": map[string]any{"guest": "1Gi"},
						"devices": map[string]any{
							"disks":      []any{map[string]any{"name": "rootdisk", "disk": map[string]any{"bus": "virtio"}}},
							"interfaces": []any{map[string]any{"name": "default", "masquerade": map[string]any{}}},
						},
					},
					"networks": []any{map[string]any{"name": "default", "pod": map[string]any{}}},
					"volumes": []any{map[string]any{
						"name":          "rootdisk",
						"containerDisk": map[string]any{"image": "quay.io/containerdisks/fedora:latest"},
					}},
				},
			},
		},
	}}
}
