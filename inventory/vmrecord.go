package inventory

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// cachedVM is what the VM informer's cache holds of a VM: its identity
// typed (what the indexer's keys, ListVMs' selectors, the membership and
// change handlers and the revision read, without decoding) and its compact
// object ([CompactVM]) packed in one string (vmcodec.go), unpacked into an
// unstructured VM only when a reader asks for that VM ([Inventory.VM]).
// The identity's strings share the packed string.
type cachedVM struct {
	metav1.ObjectMeta
	// packed is the compact VM; empty when obj holds it instead.
	packed string
	// obj is the compact VM kept as is when it holds a value pack cannot
	// encode (never from the apiserver's JSON: a safety net).
	obj *unstructured.Unstructured
}

// newCachedVM packs the compact VM kept.
func newCachedVM(kept *unstructured.Unstructured) *cachedVM {
	packed, err := pack(kept.Object)
	if err != nil {
		return &cachedVM{ObjectMeta: identityOf(kept), obj: kept}
	}
	// Read the identity back from the unpacked copy: its strings are
	// slices of packed, so the identity costs its headers only.
	u, err := unpack(packed)
	if err != nil {
		return &cachedVM{ObjectMeta: identityOf(kept), obj: kept}
	}
	return &cachedVM{ObjectMeta: identityOf(&unstructured.Unstructured{Object: u}), packed: packed}
}

// identityOf is the part of u's metadata a cachedVM keeps typed.
func identityOf(u *unstructured.Unstructured) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: types.UID(u.GetUID()),
		ResourceVersion: u.GetResourceVersion(), DeletionTimestamp: u.GetDeletionTimestamp()}
	if l, ok := u.Object["metadata"].(map[string]any)["labels"].(map[string]any); ok && len(l) > 0 {
		m.Labels = make(map[string]string, len(l))
		for k, v := range l {
			if s, ok := v.(string); ok {
				m.Labels[k] = s
			}
		}
	}
	return m
}

// VM unpacks the compact VM: a new object, its strings shared with the
// cache.
func (c *cachedVM) VM() (*unstructured.Unstructured, error) {
	if c.obj != nil {
		return c.obj, nil
	}
	m, err := unpack(c.packed)
	if err != nil {
		return nil, fmt.Errorf("inventory: cached VM %s/%s: %w", c.Namespace, c.Name, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// GetObjectKind implements runtime.Object.
func (c *cachedVM) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object: the packed string is
// immutable, so a copy shares it.
func (c *cachedVM) DeepCopyObject() runtime.Object {
	out := &cachedVM{packed: c.packed, obj: c.obj}
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if c.obj != nil {
		out.obj = c.obj.DeepCopy()
	}
	return out
}
