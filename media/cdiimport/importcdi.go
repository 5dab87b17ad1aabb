package cdiimport

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	cdiv1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The CDI DataVolume: where CDI's DataVolume CRD (cdi.kubevirt.io/v1beta1)
// is installed, a slot's image is imported by a DataVolume named after the
// slot's claim, with an http source: CDI creates the PVC (same name, owned
// by the DataVolume, labelled like it), downloads the image and reports
// status.progress, which becomes the Task's PercentComplete. The import
// ConfigMap (CAs) is its certConfigMap; it is never given credentials (no
// secretRef: an insert with credentials never comes here, see below).
// The DataVolume is owned by the VM and stays while the slot holds its image
// (CDI's garbage collection of completed DataVolumes is refused by
// annotation); it is deleted on eject, on re-insert and when its import
// failed, and its PVC goes with it.
//
// What CDI cannot do safely is imported by the pod instead: an insert with
// VerifyCertificate false (CDI's http source always verifies) and one with
// credentials (CDI's importer re-attaches them on every redirect, to any
// host; the pod sends them to the image URL's scheme, host and port only,
// and refuses a redirect from https to http). CDI's importer applies none of
// the bridge's address policy when it connects: the policy is checked at
// insert instead, on literal IPs and on every address the host name resolves
// to then (media's Service.SetHostResolver); a DNS answer that changes between
// that check and the importer's dial (rebinding) and HTTP redirects (CDI
// follows them, to any host) are not checked: a NetworkPolicy on CDI's
// importer pods closes them (the chart renders one by default, and makes the
// bridge import with the pod where it cannot: see docs/images.md). The
// maximum image size bounds the DataVolume's requested size
// ([dataVolumeSize]); CDI fails an image that does not fit its PVC. The
// DataVolume is never resized: an image larger than the default claim size
// fails on this path.

// DataVolumeResource is CDI's DataVolume.
var DataVolumeResource = cdiv1beta1.SchemeGroupVersion.WithResource("datavolumes")

// DataVolumeKind is the kind of [DataVolumeResource].
const DataVolumeKind = importer.DataVolumeKind

// CDI's annotation keeping a completed DataVolume (and so its PVC's
// importer.Owner); CDI's API package does not export it (its controller's
// common.AnnDeleteAfterCompletion).
const annDeleteAfterCompletion = "cdi.kubevirt.io/storage.deleteAfterCompletion"

// Method is the CDI method's name (system.MediaSlot.Method).
const Method = "cdi"

func init() {
	importer.Register(importer.Registration{
		Method: Method, Preference: 10, New: newCDIImporter,
		Ejector: func(kube kubernetes.Interface) importer.Ejector { return cdiEjector{kube} },
	})
}

// newCDIImporter is available when the reconciler has a dynamic client and
// discovery serves DataVolumes.
func newCDIImporter(_ context.Context, d importer.Deps) (importer.Importer, bool, error) {
	if d.Dynamic == nil {
		return nil, false, nil
	}
	gv := DataVolumeResource.GroupVersion().String()
	res, err := d.Kube.Discovery().ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("discover %s: %w", gv, err)
	}
	if !slices.ContainsFunc(res.APIResources, func(a metav1.APIResource) bool { return a.Name == DataVolumeResource.Resource }) {
		return nil, false, nil
	}
	return &cdiImporter{cdiEjector: cdiEjector{d.Kube}, d: d, waiters: map[string]map[system.Key]bool{}}, true, nil
}

type cdiImporter struct {
	cdiEjector
	d       importer.Deps
	listers []cache.GenericLister
	// pods are the check pods of the image cache (cachecheck.go).
	pods []corelisters.PodLister

	mu sync.Mutex
	// waiters are the VMs waiting for each CDI cache entry (namespace/name).
	waiters map[string]map[system.Key]bool
}

func (c *cdiImporter) Method() string { return Method }

func (c *cdiImporter) Refuses(slot system.MediaSlot) string {
	if slot.Insecure {
		return "CDI's http source cannot skip TLS verification (VerifyCertificate false)"
	}
	if slot.Credentials {
		return "CDI's importer sends InsertMedia's UserName and Password on every redirect, to any host"
	}
	return ""
}

func (c *cdiImporter) Watch(ctx context.Context, namespaces []string, enqueue func(obj any)) ([]cache.InformerSynced, error) {
	var synced []cache.InformerSynced
	for _, ns := range namespaces {
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.d.Dynamic, 0, ns,
			func(o *metav1.ListOptions) { o.LabelSelector = importer.PartOfSelector().String() })
		inf := f.ForResource(DataVolumeResource)
		if err := inf.Informer().SetTransform(importer.TrimCached(AnnotationCacheValidators)); err != nil {
			return nil, fmt.Errorf("DataVolumes: %w", err)
		}
		h := importer.HandlerFor(enqueue)
		h.AddFunc = func(obj any) { enqueue(obj); c.wake(nil, obj) }
		h.UpdateFunc = func(old, obj any) { enqueue(obj); c.wake(old, obj) }
		h.DeleteFunc = func(obj any) {
			enqueue(obj)
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			c.wake(nil, obj)
		}
		if _, err := inf.Informer().AddEventHandler(h); err != nil {
			return nil, fmt.Errorf("DataVolumes: add handler: %w", err)
		}
		synced = append(synced, inf.Informer().HasSynced)
		c.listers = append(c.listers, inf.Lister())
		f.Start(ctx.Done())
		context.AfterFunc(ctx, f.Shutdown)

		pf := informers.NewSharedInformerFactoryWithOptions(c.d.Kube, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = checkSelector("").String() }))
		pods := pf.Core().V1().Pods()
		if err := pods.Informer().SetTransform(importer.TrimCached()); err != nil {
			return nil, fmt.Errorf("check pods: %w", err)
		}
		if _, err := pods.Informer().AddEventHandler(importer.HandlerFor(enqueue)); err != nil {
			return nil, fmt.Errorf("check pods: add handler: %w", err)
		}
		synced = append(synced, pods.Informer().HasSynced)
		c.pods = append(c.pods, pods.Lister())
		pf.Start(ctx.Done())
		context.AfterFunc(ctx, pf.Shutdown)
	}
	return synced, nil
}

// list returns the cached DataVolumes o owns of slot ("": all).
func (c *cdiImporter) list(o importer.Owner, slot string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, l := range c.listers {
		objs, err := l.ByNamespace(o.Key.Namespace).List(importer.PartOfSelector())
		if err != nil {
			return nil, fmt.Errorf("list DataVolumes of %s: %w", o.Key, err)
		}
		for _, obj := range objs {
			dv, ok := obj.(*unstructured.Unstructured)
			if ok && o.Owns(dv) && dv.GetLabels()[importer.LabelComponent] == importer.ComponentMedia && (slot == "" || dv.GetLabels()[importer.LabelSlot] == slot) {
				out = append(out, dv)
			}
		}
	}
	return out, nil
}

func (c *cdiImporter) Observe(ctx context.Context, t importer.Target) (importer.Status, error) {
	o, slot := t.Owner, t.Slot
	dvs, err := c.list(o, slot.Slot)
	if err != nil {
		return importer.Status{}, err
	}
	var current *unstructured.Unstructured
	others := 0
	for _, dv := range dvs {
		if dv.GetLabels()[importer.LabelInsertID] == slot.InsertID {
			current = dv
			continue
		}
		others++
		if err := c.deleteDataVolume(ctx, dv); err != nil {
			return importer.Status{}, err
		}
	}
	switch {
	case current != nil && current.GetDeletionTimestamp() != nil, current == nil && others > 0:
		return importer.Status{State: importer.Waiting}, nil // gone soon (an event)
	case current != nil:
		return c.status(current), nil
	}
	if slot.Phase == system.MediaImporting {
		// Our cache may lag behind our own create: ask before re-creating.
		dv, err := c.d.Dynamic.Resource(DataVolumeResource).Namespace(o.Key.Namespace).Get(ctx, slot.ClaimName, metav1.GetOptions{})
		switch {
		case err == nil && o.Owns(dv) && dv.GetLabels()[importer.LabelInsertID] == slot.InsertID:
			return importer.Status{State: importer.Running}, nil // its events will follow
		case err == nil:
			return importer.Status{State: importer.Waiting}, nil // an older one, being deleted
		case !apierrors.IsNotFound(err):
			return importer.Status{}, fmt.Errorf("get DataVolume %s/%s: %w", o.Key.Namespace, slot.ClaimName, err)
		}
	}
	// CDI creates the PVC: one left under the claim's name must go first.
	pvc, err := c.d.Claims.Claim(o.Key.Namespace, slot.ClaimName)
	switch {
	case err != nil:
		return importer.Status{}, err
	case pvc != nil && pvc.DeletionTimestamp == nil && o.Owns(pvc):
		// The import pod's PVC of an earlier insert.
		return importer.Status{State: importer.Waiting}, importer.DeleteClaim(ctx, c.d.Kube, pvc)
	case pvc != nil:
		return importer.Status{State: importer.Waiting}, nil // an older DataVolume's, going with it
	}
	n := next{claimSize: dataVolumeSize(download.ClaimSize(slot.SizeBytes, c.d.Options.DefaultSize), c.d.Options.MaxImageSize)}
	if slot.CacheKey != "" {
		return c.observeCached(ctx, t, n)
	}
	return absent(n), nil
}

// cdiTooSmall are CDI's words for an image that does not fit the PVC:
// cdi-controller's shortening of its importer's "Virtual image size N is
// larger than the reported available storage M", and the importer's own.
var cdiTooSmall = []string{"DataVolume too small to contain image", "is larger than the reported available storage"}

// status is [dataVolumeStatus], CDI's failure for an image too large for
// a DataVolume sized at the maximum image size saying so (CDI's message
// speaks of the PVC only); any other failure (a 404, a TLS error) is left
// as CDI said it.
func (c *cdiImporter) status(u *unstructured.Unstructured) importer.Status {
	dv, err := asDataVolume(u)
	if err != nil {
		return importer.Status{State: importer.Failed, Reason: err.Error()}
	}
	st := dataVolumeStatus(dv)
	tooSmall := slices.ContainsFunc(cdiTooSmall, func(w string) bool { return strings.Contains(st.Reason, w) })
	if dv.Spec.Storage != nil && st.State == importer.Failed && tooSmall {
		q := dv.Spec.Storage.Resources.Requests[corev1.ResourceStorage]
		if q.Value() >= c.d.Options.MaxImageSize {
			st.Reason += "; the DataVolume requests the maximum image size " + download.FormatBytes(c.d.Options.MaxImageSize) + ": a larger image cannot be imported"
		}
	}
	return st
}

func (c *cdiImporter) Start(ctx context.Context, t importer.Target, st importer.Status) error {
	n, _ := st.Next.(next)
	if t.Slot.CacheKey != "" {
		return c.startCached(ctx, t, n)
	}
	return c.create(ctx, t.Owner, dataVolumeFor(t.Owner, t.Slot, n.claimSize, c.d.Options.StorageClass), t.Owner.Owns)
}

// create creates the DataVolume dv for o; one of that name that is not
// ours is a [*ForeignClaimError].
func (c *cdiImporter) create(ctx context.Context, o importer.Owner, dv *cdiv1beta1.DataVolume, ours func(metav1.Object) bool) error {
	ns := o.Key.Namespace
	u, err := unstructuredDataVolume(dv)
	if err != nil {
		return err
	}
	_, err = c.d.Dynamic.Resource(DataVolumeResource).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
	switch {
	case err == nil:
		logctx.From(ctx).InfoContext(ctx, "DataVolume created", "vm", o.Key.String(), "dataVolume", dv.Name, "insertID", dv.Labels[importer.LabelInsertID])
		return nil
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create DataVolume %s/%s: %w", ns, dv.Name, err)
	}
	// Our cache lags, or the name is someone else's.
	live, err := c.d.Dynamic.Resource(DataVolumeResource).Namespace(ns).Get(ctx, dv.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get DataVolume %s/%s: %w", ns, dv.Name, err)
	}
	if !ours(live) {
		return &importer.ForeignClaimError{Namespace: ns, Name: dv.Name, VM: o.Key, Kind: DataVolumeKind}
	}
	return nil
}

// finish keeps the DataVolume: it owns the image's PVC. A failed one goes
// in settle, once the slot is recorded Failed. The check pod goes.
func (c *cdiImporter) Finish(ctx context.Context, t importer.Target) error {
	return c.deleteChecks(ctx, t, "")
}

// settle deletes the slot's check pods and DataVolumes except the one
// holding a Ready slot's image.
func (c *cdiImporter) Settle(ctx context.Context, t importer.Target) error {
	if err := c.deleteChecks(ctx, t, ""); err != nil {
		return err
	}
	dvs, err := c.list(t.Owner, t.Slot.Slot)
	if err != nil {
		return err
	}
	for _, dv := range dvs {
		if t.Slot.Phase == system.MediaReady && dv.GetLabels()[importer.LabelInsertID] == t.Slot.InsertID {
			continue
		}
		if err := c.deleteDataVolume(ctx, dv); err != nil {
			return err
		}
	}
	return nil
}

func (c *cdiImporter) Orphans(o importer.Owner) ([]metav1.Object, error) {
	dvs, err := importer.Objects(c.list(o, ""))
	if err != nil {
		return nil, err
	}
	pods, err := importer.Objects(c.checks(o, ""))
	return append(dvs, pods...), err
}

func (c *cdiImporter) Remove(ctx context.Context, obj metav1.Object) error {
	switch obj := obj.(type) {
	case *unstructured.Unstructured:
		return c.deleteDataVolume(ctx, obj)
	case *corev1.Pod:
		return importer.DeletePod(ctx, c.d.Kube, obj)
	}
	return fmt.Errorf("CDI import method: cannot remove a %T", obj)
}

// deleteDataVolume deletes dv (only if it is still the object read, UID
// precondition); its PVC goes with it (owned by it).
func (c *cdiImporter) deleteDataVolume(ctx context.Context, dv *unstructured.Unstructured) error {
	if dv.GetDeletionTimestamp() != nil {
		return nil
	}
	uid := dv.GetUID()
	err := c.d.Dynamic.Resource(DataVolumeResource).Namespace(dv.GetNamespace()).Delete(ctx, dv.GetName(), metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete DataVolume %s/%s: %w", dv.GetNamespace(), dv.GetName(), err)
	}
	logctx.From(ctx).InfoContext(ctx, "DataVolume deleted", "dataVolume", dv.GetNamespace()+"/"+dv.GetName(), "insertID", dv.GetLabels()[importer.LabelInsertID])
	return nil
}
