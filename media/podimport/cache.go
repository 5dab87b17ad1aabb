package podimport

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The pod method's side of the image cache (the import pod's is
// download/cachefill.go): with the cache on (media's Service.SetImageCache)
// an insert records its [system.MediaSlot.CacheKey] and the pod method
// mounts the namespace's cache entry of that key, a PVC named by
// [importer.CacheClaimName], into the insert's import pod.

// cacheEntryFor builds the cache entry PVC of the slot's key, owned by the
// VM whose insert creates it (the GC deletes it with that VM or the
// namespace; an import pod using it keeps it until done: pvc-protection).
func cacheEntryFor(o importer.Owner, slot system.MediaSlot, size resource.Quantity, storageClass string) *corev1.PersistentVolumeClaim {
	pvc := importer.ClaimFor(o, slot, size, storageClass)
	pvc.Name = importer.CacheClaimName(slot.CacheKey)
	pvc.Labels = map[string]string{importer.LabelComponent: importer.ComponentImageCache, importer.LabelPartOf: importer.PartOf}
	pvc.Annotations = map[string]string{importer.AnnotationCacheKey: slot.CacheKey}
	return pvc
}

// checkCacheEntry looks at the slot's cache entry before an import:
// exists, and ready (absent, or the bridge's entry of this key, not being
// deleted, at least size). A too small entry is deleted (pvc-protection
// keeps it while a pod copies from it) and re-created once gone.
func (p *podImporter) checkCacheEntry(ctx context.Context, o importer.Owner, slot system.MediaSlot, size resource.Quantity) (exists, ready bool, err error) {
	name := importer.CacheClaimName(slot.CacheKey)
	pvc, err := p.d.Claims.Claim(o.Key.Namespace, name)
	switch {
	case err != nil:
		return false, false, err
	case pvc == nil:
		return false, true, nil
	case !importer.IsCacheEntry(pvc, slot.CacheKey):
		return true, false, &importer.ForeignClaimError{Namespace: pvc.Namespace, Name: name, VM: o.Key, Kind: "image cache PVC"}
	case pvc.DeletionTimestamp != nil:
		return true, false, nil
	}
	have := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if have.Cmp(size) >= 0 {
		return true, true, nil
	}
	logctx.From(ctx).InfoContext(ctx, "image cache entry too small, replacing it", "vm", o.Key.String(), "pvc", name, "have", have.String(), "want", size.String())
	return true, false, importer.DeleteClaim(ctx, p.d.Kube, pvc)
}

// createCacheEntry creates the slot's cache entry of size; created is
// false when it existed.
func (p *podImporter) createCacheEntry(ctx context.Context, o importer.Owner, slot system.MediaSlot, size resource.Quantity) (created bool, err error) {
	pvc := cacheEntryFor(o, slot, size, p.d.Options.StorageClass)
	_, err = p.d.Kube.CoreV1().PersistentVolumeClaims(o.Key.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
	switch {
	case err == nil:
		logctx.From(ctx).InfoContext(ctx, "image cache entry created", "vm", o.Key.String(), "pvc", pvc.Name, "size", size.String())
		return true, nil
	case apierrors.IsAlreadyExists(err):
		// Another slot of the key made it first, or it is not ours: the
		// cache shows only PVCs with the bridge's label, so look.
		live, err := p.liveEntry(ctx, o.Key.Namespace, pvc.Name)
		if err != nil {
			return false, err
		}
		if live != nil && !importer.IsCacheEntry(live, slot.CacheKey) {
			return false, &importer.ForeignClaimError{Namespace: o.Key.Namespace, Name: pvc.Name, VM: o.Key, Kind: "image cache PVC"}
		}
		return false, nil
	default:
		return false, fmt.Errorf("create image cache PVC %s/%s: %w", o.Key.Namespace, pvc.Name, err)
	}
}

// evictFor makes room for a new entry of need in the namespace under
// the image cache budget (0: no budget): entries other than keep are
// deleted least recently used first until the namespace's entries fit,
// never one an import pod that has not ended mounts (a live list: pods
// this reconciler created a moment ago included). Entries in use may keep
// the namespace over the budget. Called with cacheMu held, so no import
// pod of this reconciler is created meanwhile.
func (p *podImporter) evictFor(ctx context.Context, ns, keep string, need resource.Quantity) error {
	if p.d.Options.ImageCacheBudget <= 0 {
		return nil
	}
	var entries []*corev1.PersistentVolumeClaim
	total := need.Value()
	pvcs, err := p.d.Claims.ClaimsOf(ns, importer.CacheSelector())
	if err != nil {
		return fmt.Errorf("list image cache entries of %s: %w", ns, err)
	}
	for _, pvc := range pvcs {
		if pvc.DeletionTimestamp != nil || pvc.Name == keep || pvc.Annotations[importer.AnnotationCacheKey] == "" {
			continue
		}
		if ref := metav1.GetControllerOf(pvc); ref != nil && ref.Kind == importer.DataVolumeKind {
			continue // a CDI entry's PVC: its DataVolume is evicted (package cdiimport)
		}
		q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		total += q.Value()
		entries = append(entries, pvc)
	}
	if total <= p.d.Options.ImageCacheBudget {
		return nil
	}
	inUse, err := MountedByImports(ctx, p.d.Kube, ns)
	if err != nil {
		return err
	}
	slices.SortFunc(entries, func(a, b *corev1.PersistentVolumeClaim) int { return p.lastUsed(a).Compare(p.lastUsed(b)) })
	for _, pvc := range entries {
		if total <= p.d.Options.ImageCacheBudget {
			break
		}
		if inUse[ns+"/"+pvc.Name] {
			continue
		}
		if err := importer.DeleteClaim(ctx, p.d.Kube, pvc); err != nil {
			return err
		}
		if err := p.deleteRecord(ctx, pvc); err != nil {
			return err
		}
		q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		total -= q.Value()
		p.d.Counters.CacheEntryEvicted()
		logctx.From(ctx).InfoContext(ctx, "image cache entry evicted (least recently used)", "namespace", ns, "pvc", pvc.Name, "size", q.String(), "lastUsed", p.lastUsed(pvc))
	}
	if total > p.d.Options.ImageCacheBudget {
		logctx.From(ctx).InfoContext(ctx, "image cache over its budget: the other entries are in use", "namespace", ns,
			"bytes", total, "budget", p.d.Options.ImageCacheBudget)
	}
	return nil
}

// lastUsed is when an import pod of this reconciler last used the entry,
// else (another leader's term) when the entry was created.
func (p *podImporter) lastUsed(pvc *corev1.PersistentVolumeClaim) time.Time {
	return p.d.Cache.LastUsed(pvc.Namespace, pvc.Name, pvc.CreationTimestamp.Time)
}

// entryGoing reports, on a live read, whether the entry ns/name is gone
// or being deleted.
func (p *podImporter) entryGoing(ctx context.Context, ns, name string) (bool, error) {
	pvc, err := p.liveEntry(ctx, ns, name)
	return err == nil && (pvc == nil || pvc.DeletionTimestamp != nil), err
}

// liveEntry reads the PVC ns/name from the apiserver; nil when absent.
func (p *podImporter) liveEntry(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	// A list by name: the bridge may list PVCs, not get them.
	l, err := p.d.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list image cache PVC %s/%s: %w", ns, name, err)
	}
	for i := range l.Items {
		if l.Items[i].Name == name {
			return &l.Items[i], nil
		}
	}
	return nil, nil
}
