package kubevirt

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Resources of KubeVirt's API group the bridge reads and writes.
var (
	// VirtualMachines is kubevirt.io/v1 virtualmachines.
	VirtualMachines = kubevirtv1.GroupVersion.WithResource("virtualmachines")
	// VirtualMachineInstances is kubevirt.io/v1 virtualmachineinstances.
	VirtualMachineInstances = kubevirtv1.GroupVersion.WithResource("virtualmachineinstances")
	// VirtualMachineKind is the VirtualMachine's GroupVersionKind (apply
	// bodies, event references).
	VirtualMachineKind = kubevirtv1.VirtualMachineGroupVersionKind
)

// CRDName is the VirtualMachine CustomResourceDefinition, whose schema
// decides whether disks and volumes are atomic or keyed lists.
var CRDName = VirtualMachines.GroupResource().String()

// CRDResource is where CustomResourceDefinitions are read.
var CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// APIVersion and Kind of a VirtualMachine as written in objects (apply
// bodies, owner and event references).
var (
	APIVersion = VirtualMachineKind.GroupVersion().String()
	Kind       = VirtualMachineKind.Kind
)

// Reference is the ObjectReference of a VirtualMachine object (events).
func Reference(vm *unstructured.Unstructured) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion: APIVersion, Kind: Kind,
		Name: vm.GetName(), Namespace: vm.GetNamespace(), UID: vm.GetUID(), ResourceVersion: vm.GetResourceVersion(),
	}
}
