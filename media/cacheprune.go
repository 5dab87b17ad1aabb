package media

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/media/cdiimport"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/media/podimport"
)

// PruneOptions say which image cache entries [PruneCache] deletes.
type PruneOptions struct {
	// Namespaces to prune; empty: every namespace.
	Namespaces []string
	// InUse deletes the entries an import pod that has not ended mounts
	// too. Kubernetes keeps a PVC a pod mounts until the pod ends
	// (pvc-protection), so the copy in progress completes; an import pod
	// created for the entry after the delete is never started. For
	// uninstall, not while the bridge serves inserts.
	InUse bool
	// DryRun deletes nothing: the result says what would go.
	DryRun bool
}

// PruneCache deletes the image cache entries of o.Namespaces: every PVC
// with the image cache's labels and key annotation ([importer.IsCacheEntry]) that
// is not already being deleted, except, unless o.InUse, those an import
// pod that has not ended mounts (as eviction skips them); and, where CDI
// is installed, the CDI method's entry DataVolumes likewise (in use: a
// clone from it has not finished). A PVC or DataVolume without the labels
// and key is never touched. It returns every entry it found, in the order
// listed, and stops at the first error.
func PruneCache(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, o PruneOptions) ([]PrunedEntry, error) {
	namespaces := o.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var out []PrunedEntry
	for _, ns := range namespaces {
		pvcs, err := kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: importer.CacheSelector().String()})
		if err != nil {
			return out, fmt.Errorf("list image cache entries of %q: %w", ns, err)
		}
		inUse, err := podimport.MountedByImports(ctx, kube, ns)
		if err != nil {
			return out, err
		}
		for i := range pvcs.Items {
			p := &pvcs.Items[i]
			key := p.Annotations[AnnotationCacheKey]
			if key == "" || !importer.IsCacheEntry(p, key) || p.DeletionTimestamp != nil {
				continue
			}
			if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == DataVolumeKind {
				continue // a CDI entry's PVC: it goes with its DataVolume
			}
			size := p.Spec.Resources.Requests[corev1.ResourceStorage]
			e := PrunedEntry{Namespace: p.Namespace, Name: p.Name, Size: size.String(), InUse: inUse[p.Namespace+"/"+p.Name]}
			if !e.InUse || o.InUse {
				if !o.DryRun {
					if err := importer.DeleteClaim(ctx, kube, p); err != nil {
						return append(out, e), err
					}
				}
				e.Deleted = true
			}
			out = append(out, e)
		}
		cdi, err := cdiimport.PruneEntries(ctx, kube, dyn, ns, o.InUse, o.DryRun)
		out = append(out, cdi...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
