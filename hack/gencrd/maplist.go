package main

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// mapLists declares k's lists x-kubernetes-list-type: map keyed by name, in
// every version.
func mapLists(crd *apiextensionsv1.CustomResourceDefinition, k kind) error {
	for i := range crd.Spec.Versions {
		root := crd.Spec.Versions[i].Schema.OpenAPIV3Schema
		for _, path := range k.lists {
			if err := edit(root, path, keyByName); err != nil {
				return fmt.Errorf("version %s: %s: %w", crd.Spec.Versions[i].Name, strings.Join(path, "."), err)
			}
		}
	}
	return nil
}

// keyByName makes the array schema s a map list keyed by name. A map key
// must be required (or defaulted); KubeVirt already requires name.
func keyByName(s *apiextensionsv1.JSONSchemaProps) error {
	if s.Type != "array" || s.Items == nil || s.Items.Schema == nil {
		return fmt.Errorf("not an array of objects")
	}
	item := s.Items.Schema
	if _, ok := item.Properties["name"]; !ok {
		return fmt.Errorf("items have no name")
	}
	if !slices.Contains(item.Required, "name") {
		item.Required = append(item.Required, "name")
		slices.Sort(item.Required)
	}
	listType := "map"
	s.XListType = &listType
	s.XListMapKeys = []string{"name"}
	return nil
}

// edit applies fn to the schema at path (property names) below s.
func edit(s *apiextensionsv1.JSONSchemaProps, path []string, fn func(*apiextensionsv1.JSONSchemaProps) error) error {
	if len(path) == 0 {
		return fn(s)
	}
	p, ok := s.Properties[path[0]]
	if !ok {
		return fmt.Errorf("no property %q", path[0])
	}
	if err := edit(&p, path[1:], fn); err != nil {
		return err
	}
	s.Properties[path[0]] = p
	return nil
}
