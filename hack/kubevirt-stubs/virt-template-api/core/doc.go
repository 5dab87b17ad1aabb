// Package core names the virt-template API group and its resource, as the
// real kubevirt.io/virt-template-api/core does (stub, see hack/kubevirt-stubs).
package core

const (
	// GroupName is the API group of VirtualMachineTemplates.
	GroupName = "template.kubevirt.io"
	// PluralResourceName is the resource of VirtualMachineTemplates.
	PluralResourceName = "virtualmachinetemplates"
	// SingularResourceName is the singular of PluralResourceName.
	SingularResourceName = "virtualmachinetemplate"
)
