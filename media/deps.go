package media

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
)

// deps is what the reconciler gives its import methods: its clients and
// options, its PVC cache, the image cache's lock and recency, its counters
// and its queue; nothing else of it.
func (r *Reconciler) deps() importer.Deps {
	return importer.Deps{
		Kube: r.opts.Kube, Dynamic: r.opts.Dynamic,
		Options:  r.opts.Options,
		Claims:   claimCache{r},
		Cache:    r.cache,
		Counters: counters{r.c},
		Enqueue:  r.ctrl.Add,
		// The same secret as the Service's (SetObjectSecret): the session key.
		CacheRecords: objmac.Derive(r.opts.ObjectSecret, importer.CacheRecordPurpose),
		ImportPods:   objmac.Derive(r.opts.ObjectSecret, importer.ImportPodPurpose),
	}
}

// claimCache is the reconciler's PVC informers as an [importer.ClaimLister].
type claimCache struct{ r *Reconciler }

// Claim returns the cached PVC, nil when absent.
func (c claimCache) Claim(ns, name string) (*corev1.PersistentVolumeClaim, error) {
	for _, l := range c.r.claims {
		pvc, err := l.PersistentVolumeClaims(ns).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get PVC %s/%s: %w", ns, name, err)
		}
		return pvc, nil
	}
	return nil, nil
}

// ClaimsOf lists the cached PVCs of ns that sel selects.
func (c claimCache) ClaimsOf(ns string, sel labels.Selector) ([]*corev1.PersistentVolumeClaim, error) {
	var out []*corev1.PersistentVolumeClaim
	for _, l := range c.r.claims {
		pvcs, err := l.PersistentVolumeClaims(ns).List(sel)
		if err != nil {
			return nil, fmt.Errorf("list PVCs of %s: %w", ns, err)
		}
		out = append(out, pvcs...)
	}
	return out, nil
}

// counters are the [Counters] as the import methods count.
type counters struct{ c *Counters }

func (c counters) PodCreated()        { c.c.podsCreated.Add(1) }
func (c counters) ClaimCreated()      { c.c.claimsCreated.Add(1) }
func (c counters) StalePodDeleted()   { c.c.stale.Add(1) }
func (c counters) CacheEntryEvicted() { c.c.evicted.Add(1) }
