package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The CDI side of the image cache (see the package doc): an insert with a
// cache key first runs a check pod (`redfish-bridge import --head-only`,
// cachecheck.go; the pod's side is download/head.go) that reports the
// image's validators; the entry of that key and version is a DataVolume
// named by cdiEntryName with an http source, and the slot's DataVolume is
// a CDI clone of its PVC.

const (
	// AnnotationCacheValidators holds, on a CDI cache entry, the
	// validators of the check before its import: the version it holds.
	AnnotationCacheValidators = "redfish-bridge.io/image-cache-validators"
	// LabelImageCheck marks an insert's check pod.
	LabelImageCheck = "redfish-bridge.io/image-check"
)

// cdiPlan is what a cached CDI insert does next.
type cdiPlan int

const (
	cdiPlanNone  cdiPlan = iota
	cdiPlanCheck         // run the check pod
	cdiPlanPlain         // no validators: the slot's own http DataVolume
	cdiPlanEntry         // import the entry of the checked version
	cdiPlanClone         // clone the entry into the slot's DataVolume
)

// cdiStep is what [cdiImporter.observeCached] found to do.
type cdiStep struct {
	plan  cdiPlan
	entry string              // the entry's DataVolume (entry, clone)
	v     download.Validators // the checked version (entry)
	size  resource.Quantity   // the clone's request: at least the entry's
}

// cdiEntryName is the DataVolume (and PVC) of the namespace's CDI cache
// entry of key holding the version v: a changed image is another entry,
// never an entry replaced under a clone.
func cdiEntryName(key string, v download.Validators) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return CacheClaimName(key) + "-" + hex.EncodeToString(sum[:4])
}

// checkPodName is the check pod of the slot's insert.
func checkPodName(slot system.MediaSlot) string {
	return PodName(slot.ClaimName, slot.InsertID) + "-check"
}

// checkSelector selects the check pods of a slot ("": all).
func checkSelector(slot string) labels.Selector {
	set := labels.Set{LabelComponent: ComponentImporter, LabelPartOf: PartOf, LabelImageCheck: "true"}
	if slot != "" {
		set[LabelSlot] = slot
	}
	return labels.SelectorFromSet(set)
}

// isCDIEntry reports whether obj is the bridge's CDI entry of key and v.
func isCDIEntry(obj metav1.Object, key string, v download.Validators) bool {
	b, _ := json.Marshal(v)
	return obj.GetLabels()[LabelPartOf] == PartOf && obj.GetLabels()[LabelComponent] == ComponentImageCache &&
		obj.GetAnnotations()[AnnotationCacheKey] == key && obj.GetAnnotations()[AnnotationCacheValidators] == string(b)
}

// observeCached continues [cdiImporter.observe] for a slot with a cache
// key whose DataVolume does not exist yet (st: importAbsent): check the
// image, then wait for the entry of its version, then clone it.
func (c *cdiImporter) observeCached(ctx context.Context, t importTarget, st importStatus) (importStatus, error) {
	o, slot, ns := t.o, t.slot, t.o.key.Namespace
	pod, err := c.checkPod(ctx, t)
	switch {
	case err != nil:
		return importStatus{}, err
	case pod == nil:
		st.cdi.plan = cdiPlanCheck
		return st, nil
	case pod.DeletionTimestamp != nil:
		return importStatus{state: importWaiting}, nil
	case pod.Status.Phase == corev1.PodFailed:
		reason := terminationMessage(pod)
		if reason == "" {
			reason = "image check pod failed"
		}
		return importStatus{state: importFailed, reason: reason}, nil
	case pod.Status.Phase != corev1.PodSucceeded:
		return importStatus{state: importRunning, started: pod.CreationTimestamp.Time}, nil
	}
	res, ok := download.ParseImportResult(terminationMessage(pod))
	if !ok || res.Validators == nil {
		return importStatus{state: importFailed, reason: "image check pod reported " + strconv.Quote(terminationMessage(pod))}, nil
	}
	v := *res.Validators
	if !v.Usable() {
		st.cdi.plan = cdiPlanPlain // nothing to revalidate against: never cached
		return st, nil
	}
	if !download.RevalidateCache {
		v = c.anyVersion(ns, slot.CacheKey, v) // the negative control: trust any entry of the key
	}
	name := cdiEntryName(slot.CacheKey, v)
	// Waiting before the read: a change the read misses wakes this VM.
	c.wait(ns+"/"+name, o.key)
	u, err := c.entry(ns, name)
	if err != nil || u == nil {
		st.cdi = cdiStep{plan: cdiPlanEntry, entry: name, v: v}
		return st, err
	}
	if !isCDIEntry(u, slot.CacheKey, v) {
		return importStatus{}, &ForeignClaimError{Namespace: ns, Name: name, VM: o.key, Kind: "image cache DataVolume"}
	}
	if u.GetDeletionTimestamp() != nil {
		return importStatus{state: importWaiting}, nil
	}
	entry, err := asDataVolume(u)
	if err != nil {
		return importStatus{}, err
	}
	est := dataVolumeStatus(entry)
	switch est.state {
	case importSucceeded:
		size := st.claimSize
		if q := entry.Spec.Storage.Resources.Requests[corev1.ResourceStorage]; entry.Spec.Storage != nil && q.Cmp(size) > 0 {
			size = q
		}
		st.cdi = cdiStep{plan: cdiPlanClone, entry: name, size: size}
		return st, nil
	case importFailed:
		if pod.CreationTimestamp.After(failedAt(entry)) {
			// This insert came after the failure: it downloads again.
			return importStatus{state: importWaiting}, c.deleteEntry(ctx, u)
		}
		// It waited for that download: it fails with the same error.
		return importStatus{state: importFailed, reason: (&download.SharedDownloadError{Message: est.reason}).Error()}, nil
	}
	est.started = pod.CreationTimestamp.Time
	return est, nil // the shared download's progress
}

// failedAt is when the entry's import failed: its Running (else Ready)
// condition's last transition, else its creation.
func failedAt(dv *cdiv1beta1.DataVolume) time.Time {
	for _, typ := range []cdiv1beta1.DataVolumeConditionType{cdiv1beta1.DataVolumeRunning, cdiv1beta1.DataVolumeReady} {
		for _, cond := range dv.Status.Conditions {
			if cond.Type == typ && !cond.LastTransitionTime.IsZero() {
				return cond.LastTransitionTime.Time
			}
		}
	}
	return dv.CreationTimestamp.Time
}

// startCached does what observeCached planned.
func (c *cdiImporter) startCached(ctx context.Context, t importTarget, st importStatus) error {
	r, o, slot, ns := c.r, t.o, t.slot, t.o.key.Namespace
	switch st.cdi.plan {
	case cdiPlanCheck:
		return c.createCheckPod(ctx, t)
	case cdiPlanPlain:
		return c.create(ctx, o, dataVolumeFor(o, slot, st.claimSize, r.opts.StorageClass), o.owns)
	case cdiPlanEntry:
		// No eviction between the check of which entries are in use and
		// this create, nor a clone's create.
		r.cacheMu.Lock()
		defer r.cacheMu.Unlock()
		if err := c.evict(ctx, ns, st.cdi.entry, st.claimSize); err != nil {
			return err
		}
		certs, err := c.entryCA(ctx, t, st.cdi.entry)
		if err != nil {
			return err
		}
		r.used(ns, st.cdi.entry)
		dv := entryDataVolume(o, slot, st.cdi.entry, st.cdi.v, certs, st.claimSize, r.opts.StorageClass)
		return c.create(ctx, o, dv, func(obj metav1.Object) bool { return isCDIEntry(obj, slot.CacheKey, st.cdi.v) })
	case cdiPlanClone:
		r.cacheMu.Lock()
		defer r.cacheMu.Unlock()
		r.used(ns, st.cdi.entry)
		if r.opts.ImageCacheBudget > 0 {
			// Evicted since observe looked (the cache may not show it yet)?
			live, err := r.opts.Dynamic.Resource(DataVolumeResource).Namespace(ns).Get(ctx, st.cdi.entry, metav1.GetOptions{})
			if err == nil && live.GetDeletionTimestamp() != nil {
				err = errors.New("being deleted")
			}
			if err != nil {
				return fmt.Errorf("image cache DataVolume %s/%s before the clone of %s: %w; retrying", ns, st.cdi.entry, o.key, err)
			}
		}
		src := cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: ns, Name: st.cdi.entry}}
		return c.create(ctx, o, slotDataVolume(o, slot, src, st.cdi.size, r.opts.StorageClass), o.owns)
	}
	return fmt.Errorf("CDI image cache: nothing planned for %s slot %s", o.key, slot.Slot)
}

// wait records that VM k waits for the entry ns/name: its next change of
// phase enqueues k (its owner's events enqueue only the owner).
func (c *cdiImporter) wait(entry string, k system.Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiters[entry] == nil {
		c.waiters[entry] = map[system.Key]bool{}
	}
	c.waiters[entry][k] = true
}

// wake enqueues the VMs waiting for the entry obj when its phase, its
// progress (cacheprogress.go), its importer's restarts or its existence
// changed.
func (c *cdiImporter) wake(old, obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetLabels()[LabelComponent] != ComponentImageCache {
		return
	}
	if o, ok := old.(*unstructured.Unstructured); ok && o.GetDeletionTimestamp().Equal(u.GetDeletionTimestamp()) && entryPhase(o) == entryPhase(u) &&
		entryProgress(o) == entryProgress(u) {
		return
	}
	c.mu.Lock()
	ks := c.waiters[u.GetNamespace()+"/"+u.GetName()]
	delete(c.waiters, u.GetNamespace()+"/"+u.GetName())
	c.mu.Unlock()
	for k := range ks {
		c.r.ctrl.Add(k)
	}
}

// entryPhase is what of a DataVolume's status wakes its waiters.
func entryPhase(u *unstructured.Unstructured) string {
	phase, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "phase")
	restarts, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "restartCount")
	return fmt.Sprint(phase, "/", restarts)
}
