// Package v1beta1 is a stub of kubevirt.io/virt-template-api/core/v1beta1:
// the VirtualMachineTemplate type with the fields virt-controller v1.9.0
// reads, and its DeepCopy. See hack/kubevirt-stubs.
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubevirt.io/virt-template-api/core"
)

// GroupVersion is template.kubevirt.io/v1beta1.
var GroupVersion = schema.GroupVersion{Group: core.GroupName, Version: "v1beta1"}

// ConditionReady is the condition type of a template that can be processed.
const ConditionReady = "Ready"

// Parameter is a template parameter.
type Parameter struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// VirtualMachineTemplateSpec holds the template's VM and its parameters.
type VirtualMachineTemplateSpec struct {
	VirtualMachine *runtime.RawExtension `json:"virtualMachine,omitempty"`
	Parameters     []Parameter           `json:"parameters,omitempty"`
}

// VirtualMachineTemplateStatus holds the template's conditions.
type VirtualMachineTemplateStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VirtualMachineTemplate is a parameterised VirtualMachine.
type VirtualMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VirtualMachineTemplateSpec   `json:"spec"`
	Status VirtualMachineTemplateStatus `json:"status,omitempty"`
}

// DeepCopy copies the template.
func (in *VirtualMachineTemplate) DeepCopy() *VirtualMachineTemplate {
	if in == nil {
		return nil
	}
	out := &VirtualMachineTemplate{TypeMeta: in.TypeMeta}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.VirtualMachine != nil {
		out.Spec.VirtualMachine = in.Spec.VirtualMachine.DeepCopy()
	}
	out.Spec.Parameters = append([]Parameter(nil), in.Spec.Parameters...)
	for _, c := range in.Status.Conditions {
		cc := c
		c.DeepCopyInto(&cc)
		out.Status.Conditions = append(out.Status.Conditions, cc)
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *VirtualMachineTemplate) DeepCopyObject() runtime.Object { return in.DeepCopy() }
