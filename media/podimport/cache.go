package media

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The bridge's side of the image cache (the import pod's is
// download/cachefill.go): with the cache on ([Service.SetImageCache]) an
// insert records its [system.MediaSlot.CacheKey] and the pod method mounts
// the namespace's cache entry of that key, a PVC named by
// [CacheClaimName], into the insert's import pod.

// Labels and annotations of an image cache entry.
const (
	ComponentImageCache = "image-cache"
	// AnnotationCacheKey holds the whole key on its entry: a PVC that
	// merely has the entry's name is never used.
	AnnotationCacheKey = "redfish-bridge.io/image-cache-key"
	// CacheMountPath is where the import pod mounts the cache entry.
	CacheMountPath = "/cache"
)

// cacheKeyLength is the key's length in hex characters (128 bits).
const cacheKeyLength = 32

// SetImageCache turns the image cache on for the inserts this Service
// accepts from now on (see the package doc).
func (s *Service) SetImageCache(on bool) { s.imageCache = on }

// cacheKey is the identity of what an insert downloads: the URL, whether
// the certificate is verified and against which CAs (ca: the PEM the
// import trusts besides the system roots), and who asks (the credentials).
// It is an HMAC-SHA256 under the bridge's secret ([Service.SetImageCacheKey]):
// the key shows in the slot annotation and the entry's name, and without
// the secret nobody can test guesses of a password against it offline.
// The credentials never leave the import Secret.
func cacheKey(secret []byte, url string, insecure bool, ca []byte, user, pass []byte) string {
	h := hmac.New(sha256.New, secret)
	field := func(b []byte) {
		h.Write([]byte(strconv.Itoa(len(b)) + ":"))
		h.Write(b)
	}
	field([]byte("redfish-bridge image cache v2"))
	field([]byte(url))
	field([]byte(strconv.FormatBool(insecure)))
	field(ca)
	field(user)
	field(pass)
	return hex.EncodeToString(h.Sum(nil))[:cacheKeyLength]
}

// CacheClaimName is the PVC of the namespace's cache entry of key.
func CacheClaimName(key string) string { return "redfish-image-" + key }

// cacheKeyOf is the insert's key, from what its import ConfigMap and
// Secret hold (data) and the slot's trust.
func cacheKeyOf(secret []byte, image string, fields system.MediaSlot, data map[string][]byte) string {
	return cacheKey(secret, image, fields.Insecure, data[download.CAKey], data[download.CredentialUserKey], data[download.CredentialPasswordKey])
}

// cacheEntryFor builds the cache entry PVC of the slot's key, owned by the
// VM whose insert creates it (the GC deletes it with that VM or the
// namespace; an import pod using it keeps it until done: pvc-protection).
func cacheEntryFor(o owner, slot system.MediaSlot, size resource.Quantity, storageClass string) *corev1.PersistentVolumeClaim {
	pvc := claimFor(o, slot, size, storageClass)
	pvc.Name = CacheClaimName(slot.CacheKey)
	pvc.Labels = map[string]string{LabelComponent: ComponentImageCache, LabelPartOf: PartOf}
	pvc.Annotations = map[string]string{AnnotationCacheKey: slot.CacheKey}
	return pvc
}

// isCacheEntry reports whether pvc is the bridge's cache entry of key.
func isCacheEntry(pvc *corev1.PersistentVolumeClaim, key string) bool {
	return pvc.Labels[LabelPartOf] == PartOf && pvc.Labels[LabelComponent] == ComponentImageCache &&
		pvc.Annotations[AnnotationCacheKey] == key
}

// checkCacheEntry looks at the slot's cache entry before an import:
// exists, and ready (absent, or the bridge's entry of this key, not being
// deleted, at least size). A too small entry is deleted (pvc-protection
// keeps it while a pod copies from it) and re-created once gone.
func (r *Reconciler) checkCacheEntry(ctx context.Context, o owner, slot system.MediaSlot, size resource.Quantity) (exists, ready bool, err error) {
	name := CacheClaimName(slot.CacheKey)
	pvc, err := r.claim(o.key.Namespace, name)
	switch {
	case err != nil:
		return false, false, err
	case pvc == nil:
		return false, true, nil
	case !isCacheEntry(pvc, slot.CacheKey):
		return true, false, &ForeignClaimError{Namespace: pvc.Namespace, Name: name, VM: o.key, Kind: "image cache PVC"}
	case pvc.DeletionTimestamp != nil:
		return true, false, nil
	}
	have := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if have.Cmp(size) >= 0 {
		return true, true, nil
	}
	logctx.From(ctx).InfoContext(ctx, "image cache entry too small, replacing it", "vm", o.key.String(), "pvc", name, "have", have.String(), "want", size.String())
	return true, false, deleteClaim(ctx, r.opts.Kube, pvc)
}

// createCacheEntry creates the slot's cache entry of size.
func (r *Reconciler) createCacheEntry(ctx context.Context, o owner, slot system.MediaSlot, size resource.Quantity) error {
	pvc := cacheEntryFor(o, slot, size, r.opts.StorageClass)
	_, err := r.opts.Kube.CoreV1().PersistentVolumeClaims(o.key.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
	switch {
	case err == nil:
		logctx.From(ctx).InfoContext(ctx, "image cache entry created", "vm", o.key.String(), "pvc", pvc.Name, "size", size.String())
	case apierrors.IsAlreadyExists(err):
		// Another slot of the key made it first, or it is not ours: the
		// cache shows only PVCs with the bridge's label, so look.
		live, err := r.liveEntry(ctx, o.key.Namespace, pvc.Name)
		if err != nil {
			return err
		}
		if live != nil && !isCacheEntry(live, slot.CacheKey) {
			return &ForeignClaimError{Namespace: o.key.Namespace, Name: pvc.Name, VM: o.key, Kind: "image cache PVC"}
		}
	default:
		return fmt.Errorf("create image cache PVC %s/%s: %w", o.key.Namespace, pvc.Name, err)
	}
	return nil
}

// cacheVolume is the slot's cache entry as the import pod's volume and
// mount, at [CacheMountPath] (--cache-dir).
func cacheVolume(slot system.MediaSlot) (corev1.Volume, corev1.VolumeMount) {
	return corev1.Volume{
			Name: "image-cache",
			VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: CacheClaimName(slot.CacheKey)},
			},
		},
		corev1.VolumeMount{Name: "image-cache", MountPath: CacheMountPath}
}

// evictFor makes room for a new entry of need in the namespace under
// [Options.ImageCacheBudget] (0: no budget): entries other than keep are
// deleted least recently used first until the namespace's entries fit,
// never one an import pod that has not ended mounts (a live list: pods
// this reconciler created a moment ago included). Entries in use may keep
// the namespace over the budget. Called with cacheMu held, so no import
// pod of this reconciler is created meanwhile.
func (r *Reconciler) evictFor(ctx context.Context, ns, keep string, need resource.Quantity) error {
	if r.opts.ImageCacheBudget <= 0 {
		return nil
	}
	var entries []*corev1.PersistentVolumeClaim
	total := need.Value()
	for _, l := range r.claims {
		pvcs, err := l.PersistentVolumeClaims(ns).List(cacheSelector())
		if err != nil {
			return fmt.Errorf("list image cache entries of %s: %w", ns, err)
		}
		for _, p := range pvcs {
			if p.DeletionTimestamp != nil || p.Name == keep || p.Annotations[AnnotationCacheKey] == "" {
				continue
			}
			if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == DataVolumeKind {
				continue // a CDI entry's PVC: its DataVolume is evicted (cachecdi.go)
			}
			q := p.Spec.Resources.Requests[corev1.ResourceStorage]
			total += q.Value()
			entries = append(entries, p)
		}
	}
	if total <= r.opts.ImageCacheBudget {
		return nil
	}
	inUse, err := mountedByImports(ctx, r.opts.Kube, ns)
	if err != nil {
		return err
	}
	slices.SortFunc(entries, func(a, b *corev1.PersistentVolumeClaim) int { return r.lastUsed(a).Compare(r.lastUsed(b)) })
	for _, p := range entries {
		if total <= r.opts.ImageCacheBudget {
			break
		}
		if inUse[ns+"/"+p.Name] {
			continue
		}
		if err := deleteClaim(ctx, r.opts.Kube, p); err != nil {
			return err
		}
		q := p.Spec.Resources.Requests[corev1.ResourceStorage]
		total -= q.Value()
		r.c.evicted.Add(1)
		logctx.From(ctx).InfoContext(ctx, "image cache entry evicted (least recently used)", "namespace", ns, "pvc", p.Name, "size", q.String(), "lastUsed", r.lastUsed(p))
	}
	if total > r.opts.ImageCacheBudget {
		logctx.From(ctx).InfoContext(ctx, "image cache over its budget: the other entries are in use", "namespace", ns,
			"bytes", total, "budget", r.opts.ImageCacheBudget)
	}
	return nil
}

// lastUsed is when an import pod of this reconciler last used the entry,
// else (another leader's term) when the entry was created.
func (r *Reconciler) lastUsed(p *corev1.PersistentVolumeClaim) time.Time {
	r.usedMu.Lock()
	defer r.usedMu.Unlock()
	if t, ok := r.cacheUsed[p.Namespace+"/"+p.Name]; ok {
		return t
	}
	return p.CreationTimestamp.Time
}

// used records that an import pod uses the entry ns/name now.
func (r *Reconciler) used(ns, name string) {
	r.usedMu.Lock()
	defer r.usedMu.Unlock()
	r.cacheUsed[ns+"/"+name] = time.Now()
}

// cacheSelector selects the image cache entries.
func cacheSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelComponent: ComponentImageCache, LabelPartOf: PartOf})
}

// entryGoing reports, on a live read, whether the entry ns/name is gone
// or being deleted.
func (r *Reconciler) entryGoing(ctx context.Context, ns, name string) (bool, error) {
	pvc, err := r.liveEntry(ctx, ns, name)
	return err == nil && (pvc == nil || pvc.DeletionTimestamp != nil), err
}

// liveEntry reads the PVC ns/name from the apiserver; nil when absent.
func (r *Reconciler) liveEntry(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	// A list by name: the bridge may list PVCs, not get them.
	l, err := r.opts.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{
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
