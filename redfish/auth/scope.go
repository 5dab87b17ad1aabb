package auth

import (
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// AllNamespaces in [Scope.Namespaces] grants every namespace.
const AllNamespaces = "*"

// Scope is the set of systems (VirtualMachines) a user may see and drive.
// The zero Scope grants nothing.
type Scope struct {
	// Namespaces the user's systems live in; [AllNamespaces] grants all.
	Namespaces []string
	// Selector further restricts systems by VM labels; nil selects all.
	Selector labels.Selector
}

// AllowsNamespace reports whether any system of namespace ns may be in scope.
func (s Scope) AllowsNamespace(ns string) bool {
	return slices.Contains(s.Namespaces, AllNamespaces) || slices.Contains(s.Namespaces, ns)
}

// Allows reports whether the system key, whose VM carries vmLabels, is in scope.
func (s Scope) Allows(key system.Key, vmLabels map[string]string) bool {
	if !s.AllowsNamespace(key.Namespace) {
		return false
	}
	return s.Selector == nil || s.Selector.Matches(labels.Set(vmLabels))
}

// Unrestricted reports whether the scope grants every system: all
// namespaces and no label selector.
func (s Scope) Unrestricted() bool {
	return slices.Contains(s.Namespaces, AllNamespaces) && (s.Selector == nil || s.Selector.Empty())
}
