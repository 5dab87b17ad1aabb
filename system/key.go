package system

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Key names one VirtualMachine.
type Key struct {
	Namespace string
	Name      string
}

// String returns "namespace/name", the form kubectl and logs use.
func (k Key) String() string { return k.Namespace + "/" + k.Name }

// ID returns the Redfish system id: "namespace.name".
//
// It is stable for the life of the VM, URL-safe (namespaces are DNS-1123
// labels, VM names DNS-1123 subdomains: lowercase letters, digits, '-' and
// '.'), and unambiguous because a namespace never contains a dot, so the
// first dot separates the two parts.
func (k Key) ID() string { return k.Namespace + "." + k.Name }

// ParseID is the inverse of [Key.ID]. It rejects anything that could not
// have come from ID, so path traversal or injection never reaches a lookup.
func ParseID(id string) (Key, error) {
	ns, name, ok := strings.Cut(id, ".")
	if !ok {
		return Key{}, fmt.Errorf("system id %q: want namespace.name", id)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return Key{}, fmt.Errorf("system id %q: namespace: %s", id, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return Key{}, fmt.Errorf("system id %q: name: %s", id, strings.Join(errs, "; "))
	}
	return Key{Namespace: ns, Name: name}, nil
}
