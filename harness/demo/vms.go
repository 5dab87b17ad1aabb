package demo

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
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

// SampleFirmwareVM is [SampleVM] without firmware.bootloader: its author
// leaves the boot firmware to KubeVirt's default (BIOS, Redfish's Legacy)
// and so to the bridge, which may switch it to UEFI (with Secure Boot) and
// back, as Ironic switches a bare-metal host's boot mode. On a SampleVM,
// whose author owns firmware.bootloader.efi, Legacy removes the author's
// efi first (apply.ErrForeignEFI).
func SampleFirmwareVM(namespace, name string) *unstructured.Unstructured {
	vm := SampleVM(namespace, name)
	unstructured.RemoveNestedField(vm.Object, kubevirt.Bootloader...)
	return vm
}

// FirmwareVMNames are the names of n firmware sample VMs
// ([SampleFirmwareVM]): vm-fw-0..vm-fw-(n-1).
func FirmwareVMNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("vm-fw-%d", i)
	}
	return names
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
	return createVMs(ctx, dyn, namespace, SampleVMNames(n), SampleVM, 0)
}

// CreateFirmwareVMs creates n firmware sample VMs ([FirmwareVMNames],
// [SampleFirmwareVM]) in namespace, as the field manager "demo-author".
func CreateFirmwareVMs(ctx context.Context, dyn dynamic.Interface, namespace string, n int) error {
	return createVMs(ctx, dyn, namespace, FirmwareVMNames(n), SampleFirmwareVM, 0)
}

// createVMs creates the VMs names built by sample, their grace period set
// to graceSeconds unless it is 0.
func createVMs(ctx context.Context, dyn dynamic.Interface, namespace string, names []string, sample func(namespace, name string) *unstructured.Unstructured, graceSeconds int64) error {
	for _, name := range names {
		vm := sample(namespace, name)
		if graceSeconds != 0 {
			SetGracePeriod(vm, graceSeconds)
		}
		if _, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(namespace).Create(ctx, vm, metav1.CreateOptions{FieldManager: "demo-author"}); err != nil {
			return fmt.Errorf("create sample VM %s/%s: %w", namespace, vm.GetName(), err)
		}
	}
	return nil
}
