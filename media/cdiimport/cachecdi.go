package cdiimport

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
	"github.com/redfish-bridge/redfish-bridge/media/importer"
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

// next is what Observe found for Start (importer.Status.Next): the size
// an absent import writes into and, for a slot with a cache key, the next
// step.
type next struct {
	claimSize resource.Quantity
	step      cdiStep
}

// absent is the status of an import that Start begins as n says.
func absent(n next) importer.Status { return importer.Status{State: importer.Absent, Next: n} }

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
	return importer.CacheClaimName(key) + "-" + hex.EncodeToString(sum[:4])
}

// checkPodName is the check pod of the slot's insert.
func checkPodName(slot system.MediaSlot) string {
	return importer.PodName(slot.ClaimName, slot.InsertID) + "-check"
}

// checkSelector selects the check pods of a slot ("": all).
func checkSelector(slot string) labels.Selector {
	set := labels.Set{importer.LabelComponent: importer.ComponentImporter, importer.LabelPartOf: importer.PartOf, importer.LabelImageCheck: "true"}
	if slot != "" {
		set[importer.LabelSlot] = slot
	}
	return labels.SelectorFromSet(set)
}

// isCDIEntry reports whether obj is the bridge's CDI entry of key and v.
func isCDIEntry(obj metav1.Object, key string, v download.Validators) bool {
	b, _ := json.Marshal(v)
	return obj.GetLabels()[importer.LabelPartOf] == importer.PartOf && obj.GetLabels()[importer.LabelComponent] == importer.ComponentImageCache &&
		obj.GetAnnotations()[importer.AnnotationCacheKey] == key && obj.GetAnnotations()[AnnotationCacheValidators] == string(b)
}

// observeCached continues [cdiImporter.Observe] for a slot with a cache
// key whose DataVolume does not exist yet (n: what an absent import
// writes into): check the image, then wait for the entry of its version,
// then clone it.
func (c *cdiImporter) observeCached(ctx context.Context, t importer.Target, n next) (importer.Status, error) {
	o, slot, ns := t.Owner, t.Slot, t.Owner.Key.Namespace
	pod, err := c.checkPod(ctx, t)
	switch {
	case err != nil:
		return importer.Status{}, err
	case pod == nil:
		n.step.plan = cdiPlanCheck
		return absent(n), nil
	case pod.DeletionTimestamp != nil:
		return importer.Status{State: importer.Waiting}, nil
	case pod.Status.Phase == corev1.PodFailed:
		reason := importer.TerminationMessage(pod)
		if reason == "" {
			reason = "image check pod failed"
		}
		return importer.Status{State: importer.Failed, Reason: reason}, nil
	case pod.Status.Phase != corev1.PodSucceeded:
		return importer.Status{State: importer.Running, Started: pod.CreationTimestamp.Time}, nil
	}
	res, ok := download.ParseImportResult(importer.TerminationMessage(pod))
	if !ok || res.Validators == nil {
		return importer.Status{State: importer.Failed, Reason: "image check pod reported " + strconv.Quote(importer.TerminationMessage(pod))}, nil
	}
	v := *res.Validators
	if !v.Usable() {
		n.step.plan = cdiPlanPlain // nothing to revalidate against: never cached
		return absent(n), nil
	}
	if !download.RevalidateCache {
		v = c.anyVersion(ns, slot.CacheKey, v) // the negative control: trust any entry of the key
	}
	name := cdiEntryName(slot.CacheKey, v)
	// Waiting before the read: a change the read misses wakes this VM.
	c.wait(ns+"/"+name, o.Key)
	u, err := c.entry(ns, name)
	if err != nil || u == nil {
		n.step = cdiStep{plan: cdiPlanEntry, entry: name, v: v}
		return absent(n), err
	}
	if !isCDIEntry(u, slot.CacheKey, v) {
		return importer.Status{}, &importer.ForeignClaimError{Namespace: ns, Name: name, VM: o.Key, Kind: "image cache DataVolume"}
	}
	if u.GetDeletionTimestamp() != nil {
		return importer.Status{State: importer.Waiting}, nil
	}
	entry, err := asDataVolume(u)
	if err != nil {
		return importer.Status{}, err
	}
	est := dataVolumeStatus(entry)
	switch est.State {
	case importer.Succeeded:
		size := n.claimSize
		if q := entry.Spec.Storage.Resources.Requests[corev1.ResourceStorage]; entry.Spec.Storage != nil && q.Cmp(size) > 0 {
			size = q
		}
		n.step = cdiStep{plan: cdiPlanClone, entry: name, size: size}
		return absent(n), nil
	case importer.Failed:
		if pod.CreationTimestamp.After(failedAt(entry)) {
			// This insert came after the failure: it downloads again.
			return importer.Status{State: importer.Waiting}, c.deleteEntry(ctx, u)
		}
		// It waited for that download: it fails with the same error.
		return importer.Status{State: importer.Failed, Reason: (&download.SharedDownloadError{Message: est.Reason}).Error()}, nil
	}
	est.Started = pod.CreationTimestamp.Time
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
func (c *cdiImporter) startCached(ctx context.Context, t importer.Target, n next) error {
	o, slot, ns, step := t.Owner, t.Slot, t.Owner.Key.Namespace, n.step
	switch step.plan {
	case cdiPlanCheck:
		return c.createCheckPod(ctx, t)
	case cdiPlanPlain:
		return c.create(ctx, o, dataVolumeFor(o, slot, n.claimSize, c.d.Options.StorageClass), o.Owns)
	case cdiPlanEntry:
		// No eviction between the check of which entries are in use and
		// this create, nor a clone's create.
		c.d.Cache.Lock()
		defer c.d.Cache.Unlock()
		if err := c.evict(ctx, ns, step.entry, n.claimSize); err != nil {
			return err
		}
		certs, err := c.entryCA(ctx, t, step.entry)
		if err != nil {
			return err
		}
		c.d.Cache.Used(ns, step.entry)
		dv := entryDataVolume(o, slot, step.entry, step.v, certs, n.claimSize, c.d.Options.StorageClass)
		return c.create(ctx, o, dv, func(obj metav1.Object) bool { return isCDIEntry(obj, slot.CacheKey, step.v) })
	case cdiPlanClone:
		c.d.Cache.Lock()
		defer c.d.Cache.Unlock()
		c.d.Cache.Used(ns, step.entry)
		if c.d.Options.ImageCacheBudget > 0 {
			// Evicted since observe looked (the cache may not show it yet)?
			live, err := c.d.Dynamic.Resource(DataVolumeResource).Namespace(ns).Get(ctx, step.entry, metav1.GetOptions{})
			if err == nil && live.GetDeletionTimestamp() != nil {
				err = errors.New("being deleted")
			}
			if err != nil {
				return fmt.Errorf("image cache DataVolume %s/%s before the clone of %s: %w; retrying", ns, step.entry, o.Key, err)
			}
		}
		src := cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: ns, Name: step.entry}}
		return c.create(ctx, o, slotDataVolume(o, slot, src, step.size, c.d.Options.StorageClass), o.Owns)
	}
	return fmt.Errorf("CDI image cache: nothing planned for %s slot %s", o.Key, slot.Slot)
}

// wait records that VM k waits for the entry ns/name: its next change of
// phase enqueues k (its importer.Owner's events enqueue only the importer.Owner).
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
	if !ok || u.GetLabels()[importer.LabelComponent] != importer.ComponentImageCache {
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
		c.d.Enqueue(k)
	}
}

// entryPhase is what of a DataVolume's status wakes its waiters.
func entryPhase(u *unstructured.Unstructured) string {
	phase, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "phase")
	restarts, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "restartCount")
	return fmt.Sprint(phase, "/", restarts)
}
