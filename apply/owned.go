package apply

import (
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// Owned parses the VM's managedFields into the field set each manager owns
// (a manager's Apply and Update entries are merged). obj must be a live
// read: the inventory's cached VMs carry no managedFields (see [VM.owned]).
func Owned(obj *unstructured.Unstructured) (map[string]*fieldpath.Set, error) {
	return ownedFrom(obj, obj.GetManagedFields())
}

func ownedFrom(obj *unstructured.Unstructured, entries []metav1.ManagedFieldsEntry) (map[string]*fieldpath.Set, error) {
	out := map[string]*fieldpath.Set{}
	for _, mf := range entries {
		if mf.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(mf.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("parse managedFields of %s/%s manager %q: %w", obj.GetNamespace(), obj.GetName(), mf.Manager, err)
		}
		if prev, ok := out[mf.Manager]; ok {
			s = prev.Union(s)
		}
		out[mf.Manager] = s
	}
	return out, nil
}

// owned is [Owned] of the VM as read: from the managedFields the cache
// kept aside for the cached version when it was read from the cache, else
// from the object itself (a live read or an apply's answer).
func (vm *VM) owned() (map[string]*fieldpath.Set, error) {
	if vm.managedAside {
		return ownedFrom(vm.Object, vm.managed)
	}
	return Owned(vm.Object)
}

// Paths lists a field set's leaf paths as strings, sorted: the readable form
// for tests and the `fields` command.
func Paths(s *fieldpath.Set) []string {
	if s == nil {
		return nil
	}
	var out []string
	s.Leaves().Iterate(func(p fieldpath.Path) { out = append(out, p.String()) })
	sort.Strings(out)
	return out
}

// owns reports whether manager owns path on obj; a managedFields parse
// error counts as "owns" so that callers keep sending the field rather than
// risk deleting it by omission.
func owns(vm *VM, manager string, path ...any) bool {
	all, err := vm.owned()
	if err != nil {
		return true
	}
	s, ok := all[manager]
	return ok && s.Has(fieldpath.MakePathOrDie(path...))
}

// ownsList reports whether manager owns the list at a string path (atomic
// mode: the whole list is one leaf).
func ownsList(vm *VM, manager string, path []string) bool {
	p := make([]any, len(path))
	for i, s := range path {
		p[i] = s
	}
	return owns(vm, manager, p...)
}

// ownsElementField reports whether manager owns field of the list element
// named name (map mode).
func ownsElementField(vm *VM, manager string, listPath []string, name, field string) bool {
	p := make([]any, 0, len(listPath)+2)
	for _, s := range listPath {
		p = append(p, s)
	}
	keyJSON, err := json.Marshal(map[string]string{kubevirt.KeyName: name})
	if err != nil {
		return true
	}
	key, err := fieldpath.DeserializePathElement("k:" + string(keyJSON))
	if err != nil {
		return true
	}
	p = append(p, key, field)
	return owns(vm, manager, p...)
}
