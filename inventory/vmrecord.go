package inventory

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// packedObject is what the VM and VMI informers' caches hold of an
// object: its identity typed (what the indexer's keys, ListVMs' selectors,
// the membership and change handlers and the revision read, without
// decoding) and its trimmed object ([CompactVM], trimVMI) packed in one
// string (vmcodec.go), unpacked into an unstructured object only when a
// reader asks for that one ([Inventory.VM], [Inventory.VMI]). The
// identity's strings share the packed string; its labels map is shared
// with the identities of the same labels.
type packedObject struct {
	metav1.ObjectMeta
	// packed is the trimmed object; empty when obj holds it instead.
	packed string
	// obj is the trimmed object kept as is when it holds a value pack
	// cannot encode (never from the apiserver's JSON: a safety net).
	obj *unstructured.Unstructured
}

// newPackedObject packs the trimmed object kept.
func newPackedObject(kept *unstructured.Unstructured) *packedObject {
	packed, err := pack(kept.Object)
	if err != nil {
		return &packedObject{ObjectMeta: identityOf(kept), obj: kept}
	}
	// Read the identity back from the unpacked copy: its strings are
	// slices of packed, so the identity costs its headers only.
	u, err := unpack(packed)
	if err != nil {
		return &packedObject{ObjectMeta: identityOf(kept), obj: kept}
	}
	return &packedObject{ObjectMeta: identityOf(&unstructured.Unstructured{Object: u}), packed: packed}
}

// identityOf is the part of u's metadata a packedObject keeps typed.
func identityOf(u *unstructured.Unstructured) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: types.UID(u.GetUID()),
		ResourceVersion: u.GetResourceVersion(), DeletionTimestamp: u.GetDeletionTimestamp()}
	meta, _ := u.Object["metadata"].(map[string]any)
	if l, ok := meta["labels"].(map[string]any); ok && len(l) > 0 {
		m.Labels = sharedLabels(l) // shared by the identities of the same labels (labelsets.go)
	}
	return m
}

// Object unpacks the trimmed object: a new object, its strings shared with
// the cache.
func (c *packedObject) Object() (*unstructured.Unstructured, error) {
	if c.obj != nil {
		return c.obj, nil
	}
	m, err := unpack(c.packed)
	if err != nil {
		return nil, fmt.Errorf("inventory: cached %s/%s: %w", c.Namespace, c.Name, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// GetObjectKind implements runtime.Object.
func (c *packedObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object: the packed string is
// immutable, so a copy shares it.
func (c *packedObject) DeepCopyObject() runtime.Object {
	out := &packedObject{packed: c.packed, obj: c.obj}
	c.DeepCopyInto(&out.ObjectMeta) // ObjectMeta's
	if c.obj != nil {
		out.obj = c.obj.DeepCopy()
	}
	return out
}
