package demo

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/sim"
)

// SampleVM is a VirtualMachine as a user (or metal3's tooling) would write
// it: a root disk on a PVC-less container disk, one masquerade interface
// with a fixed MAC (bare-metal hosts are enrolled by MAC), UEFI firmware and
// a persisted firmware UUID (as KubeVirt's mutating webhook sets it).
func SampleVM(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1",
		"kind":       "VirtualMachine",
		"metadata": map[string]any{
			"name":      name,
			"namespace": namespace,
			"labels":    map[string]any{"app.kubernetes.io/part-of": "redfish-bridge-demo"},
		},
		"spec": map[string]any{
			"runStrategy": "Halted",
			"template": map[string]any{
				"spec": map[string]any{
					"domain": map[string]any{
						"cpu":    map[string]any{"sockets": int64(1), "cores": int64(2), "threads": int64(1)},
						"memory": map[string]any{"guest": "4Gi"},
						"firmware": map[string]any{
							"uuid":       sim.FirmwareUUID(namespace, name),
							"bootloader": map[string]any{"efi": map[string]any{"secureBoot": false}},
						},
						"devices": map[string]any{
							"disks": []any{
								map[string]any{"name": "rootdisk", "disk": map[string]any{"bus": "virtio"}},
							},
							"interfaces": []any{
								map[string]any{"name": "default", "masquerade": map[string]any{}, "macAddress": sim.MAC(namespace, name, "default")},
							},
						},
					},
					"networks": []any{map[string]any{"name": "default", "pod": map[string]any{}}},
					"volumes": []any{
						map[string]any{"name": "rootdisk", "emptyDisk": map[string]any{"capacity": "20Gi"}},
					},
				},
			},
		},
	}}
}

// SampleVMNames are the names of n sample VMs: vm-0..vm-(n-1).
func SampleVMNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("vm-%d", i)
	}
	return names
}

// SetGracePeriod sets vm's spec.template.spec.terminationGracePeriodSeconds:
// how long virt-handler lets the guest of its VMIs shut down once stopped
// (KubeVirt's default 30 s) unless virt-api's stop or restart shortens it.
func SetGracePeriod(vm *unstructured.Unstructured, seconds int64) {
	if err := unstructured.SetNestedField(vm.Object, seconds, "spec", "template", "spec", "terminationGracePeriodSeconds"); err != nil {
		panic(err) // the sample VM's template is maps all the way
	}
}

// CreateSampleVMs creates n sample VMs ([SampleVMNames]) in namespace, as
// the field manager "demo-author".
func CreateSampleVMs(ctx context.Context, dyn dynamic.Interface, namespace string, n int) error {
	return createSampleVMs(ctx, dyn, namespace, n, 0)
}

// createSampleVMs is CreateSampleVMs with the VMs' grace period set to
// graceSeconds unless it is 0.
func createSampleVMs(ctx context.Context, dyn dynamic.Interface, namespace string, n int, graceSeconds int64) error {
	for _, name := range SampleVMNames(n) {
		vm := SampleVM(namespace, name)
		if graceSeconds != 0 {
			SetGracePeriod(vm, graceSeconds)
		}
		if _, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(namespace).Create(ctx, vm, metav1.CreateOptions{FieldManager: "demo-author"}); err != nil {
			return fmt.Errorf("create sample VM %s/%s: %w", namespace, vm.GetName(), err)
		}
	}
	return nil
}
