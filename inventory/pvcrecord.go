package inventory

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cachedPVC is what the PVC informer's cache holds of a PVC: the fields a
// System's disk sizes read, typed, without the PersistentVolumeClaim
// struct and its two quantity maps (2.2 KB of heap per PVC as a trimmed
// PersistentVolumeClaim). [Inventory.PVC] rebuilds the
// PersistentVolumeClaim trimPVC describes.
type cachedPVC struct {
	metav1.ObjectMeta
	phase                   corev1.PersistentVolumeClaimPhase
	request, capacity       resource.Quantity
	hasRequest, hasCapacity bool
}

// PVC is the trimmed PersistentVolumeClaim: identity, phase, storage
// request and capacity. A new object per call.
func (c *cachedPVC) PVC() *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: c.Name, Namespace: c.Namespace, UID: c.UID, ResourceVersion: c.ResourceVersion,
		DeletionTimestamp: c.DeletionTimestamp,
	}}
	pvc.Status.Phase = c.phase
	if c.hasRequest {
		pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: c.request}
	}
	if c.hasCapacity {
		pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: c.capacity}
	}
	return pvc
}

// GetObjectKind implements runtime.Object.
func (c *cachedPVC) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object.
func (c *cachedPVC) DeepCopyObject() runtime.Object {
	out := *c
	c.DeepCopyInto(&out.ObjectMeta) // ObjectMeta's
	out.request, out.capacity = c.request.DeepCopy(), c.capacity.DeepCopy()
	return &out
}
