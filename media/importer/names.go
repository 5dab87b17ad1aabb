package importer

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Labels and annotations on import pods and PVCs.
const (
	LabelComponent = "app.kubernetes.io/component"
	LabelPartOf    = "app.kubernetes.io/part-of"
	LabelInsertID  = "redfish-bridge.io/insert-id"
	LabelSlot      = "redfish-bridge.io/media-slot"

	ComponentImporter = "importer"
	ComponentMedia    = "media"
	PartOf            = "redfish-bridge"
)

// Labels and annotations of an image cache entry.
const (
	ComponentImageCache = "image-cache"
	// AnnotationCacheKey holds the whole key on its entry: a PVC that
	// merely has the entry's name is never used.
	AnnotationCacheKey = "redfish-bridge.io/image-cache-key"
	// CacheMountPath is where the import pod mounts the cache entry.
	CacheMountPath = "/cache"
	// LabelImageCheck marks an insert's check pod (the CDI method's image
	// cache): not an import pod.
	LabelImageCheck = "redfish-bridge.io/image-check"
)

// DataVolumeKind is the kind of CDI's DataVolume: the controller of the
// PVCs CDI makes.
const DataVolumeKind = "DataVolume"

// PodName is the deterministic name of the import pod of one insert.
func PodName(claim, insertID string) string { return claim + "-" + insertID }

// CacheClaimName is the PVC of the namespace's cache entry of key.
func CacheClaimName(key string) string { return "redfish-image-" + key }

// CacheSelector selects the image cache entries.
func CacheSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelComponent: ComponentImageCache, LabelPartOf: PartOf})
}

// IsCacheEntry reports whether pvc is the bridge's cache entry of key.
func IsCacheEntry(pvc *corev1.PersistentVolumeClaim, key string) bool {
	return pvc.Labels[LabelPartOf] == PartOf && pvc.Labels[LabelComponent] == ComponentImageCache &&
		pvc.Annotations[AnnotationCacheKey] == key
}

// CacheVolume is the slot's cache entry as the import pod's volume and
// mount, at [CacheMountPath] (--cache-dir).
func CacheVolume(cacheKey string) (corev1.Volume, corev1.VolumeMount) {
	return corev1.Volume{
			Name: "image-cache",
			VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: CacheClaimName(cacheKey)},
			},
		},
		corev1.VolumeMount{Name: "image-cache", MountPath: CacheMountPath}
}

// PrunedEntry is an image cache entry a prune found.
type PrunedEntry struct {
	Namespace, Name string
	// Size is the entry's PVC request.
	Size string
	// InUse: an import pod that has not ended mounts it.
	InUse bool
	// Deleted: deleted (or, with DryRun, would be).
	Deleted bool
}
