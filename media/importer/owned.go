package importer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Owner is the VM an import object belongs to.
type Owner struct {
	Key system.Key
	UID types.UID
}

// Ref is the ownerReference to the VM on the objects the bridge makes.
func (o Owner) Ref() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         kubevirt.APIVersion,
		Kind:               kubevirt.Kind,
		Name:               o.Key.Name,
		UID:                o.UID,
		Controller:         ptr.To(false),
		BlockOwnerDeletion: ptr.To(false),
	}
}

// Owns reports whether obj is one the bridge made for this VM: it carries
// the bridge's part-of label and an ownerReference to this VM's UID. A
// name proves nothing (anyone allowed to create PVCs in the namespace can
// create one called <vm>-media-cd0), so nothing is ever deleted by name
// alone.
func (o Owner) Owns(obj metav1.Object) bool {
	if o.UID == "" || obj.GetNamespace() != o.Key.Namespace || obj.GetLabels()[LabelPartOf] != PartOf {
		return false
	}
	for _, r := range obj.GetOwnerReferences() {
		if r.Kind == kubevirt.Kind && r.APIVersion == kubevirt.APIVersion && r.Name == o.Key.Name && r.UID == o.UID {
			return true
		}
	}
	return false
}

// OwnerName returns the name of obj's owning VirtualMachine.
func OwnerName(obj metav1.Object) (string, bool) {
	for _, r := range obj.GetOwnerReferences() {
		if r.Kind == kubevirt.Kind && r.APIVersion == kubevirt.APIVersion {
			return r.Name, true
		}
	}
	return "", false
}

// ForeignClaimError reports a PVC (or DataVolume) with the slot's claim
// name that the bridge did not create for this VM: it is neither used nor
// deleted.
type ForeignClaimError struct {
	Namespace, Name string
	VM              system.Key
	// Kind is what holds the name; "" is a PVC.
	Kind string
}

func (e *ForeignClaimError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "PVC"
	}
	return fmt.Sprintf("%s %s/%s exists and was not created by redfish-bridge for VM %s; delete or rename it, then insert again",
		kind, e.Namespace, e.Name, e.VM)
}

// DeletePod deletes the import pod p, only if it is still the object read
// (UID precondition).
func DeletePod(ctx context.Context, kube kubernetes.Interface, p *corev1.Pod) error {
	err := kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &p.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete import pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// DeleteClaim deletes the image PVC c, only if it is still the object read
// (UID precondition).
func DeleteClaim(ctx context.Context, kube kubernetes.Interface, c *corev1.PersistentVolumeClaim) error {
	err := kube.CoreV1().PersistentVolumeClaims(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &c.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete PVC %s/%s: %w", c.Namespace, c.Name, err)
	}
	return nil
}

// DeleteOwnedClaim deletes the PVC named name if o owns it; a PVC someone
// else made under that name is left alone.
func DeleteOwnedClaim(ctx context.Context, kube kubernetes.Interface, o Owner, name string) error {
	// A list by name: the bridge may list PVCs, not get them.
	l, err := kube.CoreV1().PersistentVolumeClaims(o.Key.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		return fmt.Errorf("list PVC %s/%s: %w", o.Key.Namespace, name, err)
	}
	for i := range l.Items {
		if pvc := &l.Items[i]; pvc.Name == name && o.Owns(pvc) {
			return DeleteClaim(ctx, kube, pvc)
		}
	}
	return nil
}

// DeleteOwnedPods deletes the pods of sel (read live) that o owns and
// that del, if set, says to delete.
func DeleteOwnedPods(ctx context.Context, kube kubernetes.Interface, o Owner, sel labels.Selector, del func(*corev1.Pod) bool) error {
	pods, err := kube.CoreV1().Pods(o.Key.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: sel.String(),
	})
	if err != nil {
		return fmt.Errorf("list import pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !o.Owns(p) || (del != nil && !del(p)) {
			continue
		}
		if err := DeletePod(ctx, kube, p); err != nil {
			return err
		}
	}
	return nil
}
