package cdiimport

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/media/importer"
)

// PruneEntries is media's PruneCache for the CDI method's entries in ns ("":
// all): DataVolumes with the image cache's labels and key annotation
// (their PVC goes with them) and their CA ConfigMaps (<entry>-ca). An
// entry a slot DataVolume that has not finished clones from
// (spec.source.pvc) is in use. Where CDI's DataVolume API is not served
// there is nothing to prune. all deletes the entries in use too; dryRun
// deletes nothing.
func PruneEntries(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, ns string, all, dryRun bool) ([]importer.PrunedEntry, error) {
	list, err := dyn.Resource(DataVolumeResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list DataVolumes of %q: %w", ns, err)
	}
	inUse := map[string]bool{}
	for _, dv := range list.Items {
		src, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "pvc", "name")
		if phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase"); src != "" && phase != "Succeeded" && phase != "Failed" {
			inUse[dv.GetNamespace()+"/"+src] = true
		}
	}
	sel := importer.CacheSelector()
	var out []importer.PrunedEntry
	for i := range list.Items {
		dv := &list.Items[i]
		if !sel.Matches(labels.Set(dv.GetLabels())) || dv.GetAnnotations()[importer.AnnotationCacheKey] == "" || dv.GetDeletionTimestamp() != nil {
			continue
		}
		size, _, _ := unstructured.NestedString(dv.Object, "spec", "storage", "resources", "requests", "storage")
		e := importer.PrunedEntry{Namespace: dv.GetNamespace(), Name: dv.GetName(), Size: size, InUse: inUse[dv.GetNamespace()+"/"+dv.GetName()]}
		if !e.InUse || all {
			if !dryRun {
				if err := deleteCDIEntry(ctx, kube, dyn, dv); err != nil {
					return append(out, e), err
				}
			}
			e.Deleted = true
		}
		out = append(out, e)
	}
	return out, nil
}

// deleteCDIEntry deletes an entry DataVolume (UID precondition) and its CA
// ConfigMap.
func deleteCDIEntry(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, dv *unstructured.Unstructured) error {
	uid := dv.GetUID()
	err := dyn.Resource(DataVolumeResource).Namespace(dv.GetNamespace()).Delete(ctx, dv.GetName(), metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete image cache DataVolume %s/%s: %w", dv.GetNamespace(), dv.GetName(), err)
	}
	// Its CA ConfigMap, by the name the bridge gives it (as deleteEntry).
	err = kube.CoreV1().ConfigMaps(dv.GetNamespace()).Delete(ctx, dv.GetName()+"-ca", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete image cache ConfigMap %s/%s-ca: %w", dv.GetNamespace(), dv.GetName(), err)
	}
	return nil
}
