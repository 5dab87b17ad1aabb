package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// pvcProtection is the finalizer kube-apiserver's StorageObjectInUseProtection
// admission plugin puts on every PVC; the pvc-protection controller (played
// here) removes it once no pod uses the claim.
const pvcProtection = "kubernetes.io/pvc-protection"

// syncPVC plays the PV binder (bind every new claim) and the pvc-protection
// controller (release a deleted claim nothing uses, and its image).
func (s *Simulator) syncPVC(ctx context.Context, k string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(k)
	c := s.cachesFor(ns)
	if err != nil || c == nil {
		return 0, nil
	}
	obj, exists, err := c.pvc.GetIndexer().GetByKey(k)
	if err != nil {
		return 0, fmt.Errorf("PVC cache: %w", err)
	}
	if !exists {
		// The volume is gone with its claim.
		if err := os.RemoveAll(filepath.Dir(s.ImagePath(ns, name))); err != nil {
			return 0, fmt.Errorf("remove data of PVC %s: %w", k, err)
		}
		return 0, nil
	}
	pvc := obj.(*corev1.PersistentVolumeClaim)
	if pvc.DeletionTimestamp != nil {
		return 0, s.releasePVC(ctx, pvc)
	}
	if pvc.Status.Phase == corev1.ClaimBound {
		return 0, nil
	}
	bound := pvc.DeepCopy()
	bound.Status.Phase = corev1.ClaimBound
	bound.Status.AccessModes = pvc.Spec.AccessModes
	bound.Status.Capacity = corev1.ResourceList{}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		bound.Status.Capacity[corev1.ResourceStorage] = q
	}
	_, err = s.kube.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, bound, metav1.UpdateOptions{FieldManager: "sim-pv-controller"})
	switch {
	case apierrors.IsNotFound(err):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("bind PVC %s: %w", k, err)
	}
	s.pvcsBound.Add(1)
	return 0, nil
}

func (s *Simulator) releasePVC(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	if !slices.Contains(pvc.Finalizers, pvcProtection) {
		return nil
	}
	if user := s.claimUser(pvc.Namespace, pvc.Name, true); user != "" {
		s.log.DebugContext(ctx, "PVC still in use", "pvc", pvc.Namespace+"/"+pvc.Name, "by", user)
		return nil // requeued when the user goes away
	}
	rest := slices.DeleteFunc(slices.Clone(pvc.Finalizers), func(f string) bool { return f == pvcProtection })
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/finalizers", "value": pvc.Finalizers},
		{"op": "replace", "path": "/metadata/finalizers", "value": rest},
	})
	if err != nil {
		return fmt.Errorf("finalizer patch: %w", err)
	}
	_, err = s.kube.CoreV1().PersistentVolumeClaims(pvc.Namespace).Patch(ctx, pvc.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("release PVC %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	return nil
}

// claimUser names a live user of PVC ns/claim: a VMI that is not Succeeded
// or Failed (virt-launcher holds its volumes until the VMI is final), a
// hotplug attachment pod that mounts it, or,
// when pods is set, an import pod that is not finished. "" if none.
func (s *Simulator) claimUser(ns, claim string, pods bool) string {
	c := s.cachesFor(ns)
	if c == nil {
		return ""
	}
	vmis, _ := c.vmi.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	for _, o := range vmis {
		vmi, ok := o.(*unstructured.Unstructured)
		if !ok || kubevirt.Final(vmi) {
			continue
		}
		vols, _, _ := unstructured.NestedSlice(vmi.Object, "spec", "volumes")
		for _, v := range vols {
			name, _, _ := unstructured.NestedString(asMap(v), "persistentVolumeClaim", "claimName")
			if name == claim {
				return "virt-launcher-" + vmi.GetName()
			}
		}
	}
	// A hotplug attachment pod holds its volumes until it is gone (it
	// outlives the unplug until virt-handler unmounted them).
	attachers, _ := c.launcher.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	for _, o := range attachers {
		if pod, ok := o.(*corev1.Pod); ok && isAttachmentPod(pod) && podUses(pod, claim) {
			return pod.Name
		}
	}
	if !pods {
		return ""
	}
	list, _ := c.pod.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	for _, o := range list {
		pod, ok := o.(*corev1.Pod)
		if ok && podUses(pod, claim) && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return pod.Name
		}
	}
	return ""
}

// podUses reports whether any of the pod's volumes is the claim.
func podUses(pod *corev1.Pod, claim string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// readWriteOnce reports whether a pod elsewhere cannot share the claim.
func readWriteOnce(pvc *corev1.PersistentVolumeClaim) bool {
	return slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOnce) ||
		slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOncePod)
}
