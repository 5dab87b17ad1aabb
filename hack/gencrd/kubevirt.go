package main

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// kind is one KubeVirt resource and what virt-operator adds to its CRD.
type kind struct {
	plural     string
	shortNames []string
	status     bool // status subresource (VirtualMachine only; the VMI has none)
	columns    []apiextensionsv1.CustomResourceColumnDefinition
	// lists are the schema paths (property names from the root) of the
	// lists the maplist variant keys by name.
	lists [][]string
}

var (
	colAge   = apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}
	colReady = apiextensionsv1.CustomResourceColumnDefinition{Name: "Ready", Type: "string", JSONPath: ".status.conditions[?(@.type=='Ready')].status"}
)

// listsUnder returns the disks, interfaces, volumes and networks paths
// below the VMI spec at prefix.
func listsUnder(prefix ...string) [][]string {
	at := func(p ...string) []string { return append(append([]string{}, prefix...), p...) }
	return [][]string{
		at("domain", "devices", "disks"),
		at("domain", "devices", "interfaces"),
		at("volumes"),
		at("networks"),
	}
}

var kinds = []kind{
	{
		plural:     "virtualmachines",
		shortNames: []string{"vm", "vms"},
		status:     true,
		columns: []apiextensionsv1.CustomResourceColumnDefinition{
			colAge,
			{Name: "Status", Type: "string", JSONPath: ".status.printableStatus", Description: "Human Readable Status"},
			colReady,
		},
		lists: listsUnder("spec", "template", "spec"),
	},
	{
		plural:     "virtualmachineinstances",
		shortNames: []string{"vmi", "vmis"},
		columns: []apiextensionsv1.CustomResourceColumnDefinition{
			colAge,
			{Name: "Phase", Type: "string", JSONPath: ".status.phase"},
			{Name: "IP", Type: "string", JSONPath: ".status.interfaces[0].ipAddress"},
			{Name: "NodeName", Type: "string", JSONPath: ".status.nodeName"},
			colReady,
			{Name: "Live-Migratable", Type: "string", JSONPath: ".status.conditions[?(@.type=='LiveMigratable')].status", Priority: 1},
			{Name: "Paused", Type: "string", JSONPath: ".status.conditions[?(@.type=='Paused')].status", Priority: 1},
		},
		lists: listsUnder("spec"),
	},
}

// operatorShape makes controller-gen's CRD look like virt-operator's.
func operatorShape(crd *apiextensionsv1.CustomResourceDefinition, k kind) error {
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != "v1" || crd.Spec.Versions[0].Schema == nil {
		return fmt.Errorf("want exactly version v1 with a schema from controller-gen, got %d versions", len(crd.Spec.Versions))
	}
	crd.Annotations = nil
	crd.Labels = map[string]string{"kubevirt.io": ""}
	crd.Spec.Names.ShortNames = k.shortNames
	crd.Spec.Names.Categories = []string{"all"}
	crd.Spec.Names.ListKind = "" // virt-operator leaves it to the apiserver's default
	v1 := &crd.Spec.Versions[0]
	v1.AdditionalPrinterColumns = k.columns
	if k.status {
		v1.Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	}
	walk(v1.Schema.OpenAPIV3Schema, func(s *apiextensionsv1.JSONSchemaProps) {
		s.Description = strings.ReplaceAll(s.Description, "`", "'")
	})
	// virt-operator still serves v1alpha3, deprecated, with the same schema.
	old := *v1.DeepCopy()
	old.Name = "v1alpha3"
	old.Storage = false
	old.Deprecated = true
	msg := "kubevirt.io/v1alpha3 is now deprecated and will be removed in a future release."
	old.DeprecationWarning = &msg
	crd.Spec.Versions = append(crd.Spec.Versions, old)
	return nil
}

// walk calls fn on s and every schema below it.
func walk(s *apiextensionsv1.JSONSchemaProps, fn func(*apiextensionsv1.JSONSchemaProps)) {
	if s == nil {
		return
	}
	fn(s)
	for name, p := range s.Properties {
		walk(&p, fn)
		s.Properties[name] = p
	}
	if s.Items != nil {
		walk(s.Items.Schema, fn)
	}
	if s.AdditionalProperties != nil {
		walk(s.AdditionalProperties.Schema, fn)
	}
}
