package podimport

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The import pod: the bridge's own image runs `redfish-bridge import`
// ([download.RunImport]) with the slot's PVC and import Secret mounted; the PVC is
// the bridge's, sized [download.ClaimSize] and re-created larger when the pod
// reports an image that does not fit. Always available.

// Method is the pod method's name (system.MediaSlot.Method).
const Method = "pod"

func init() {
	importer.Register(importer.Registration{
		Method: Method, Preference: 0,
		New: func(_ context.Context, d importer.Deps) (importer.Importer, bool, error) {
			return &podImporter{podEjector: podEjector{d.Kube}, d: d}, true, nil
		},
		Ejector: func(kube kubernetes.Interface) importer.Ejector { return podEjector{kube} },
	})
}

// next is what observe found for start: whether the slot's PVC and its
// cache entry exist, and the size the import writes into.
type next struct {
	claimExists bool
	claimSize   resource.Quantity
	cacheExists bool
}

type podImporter struct {
	podEjector
	d    importer.Deps
	pods []corelisters.PodLister
	// progress holds the last reads of running import pods' logs (progress.go).
	progress podProgress
	// refills are the import pods whose copy from the image cache failed
	// its check (cacherecord.go).
	refills refillSet
}

// podEjector deletes the slot's import pods (not the CDI method's check
// pods) on eject.
type podEjector struct{ kube kubernetes.Interface }

func (e podEjector) Eject(ctx context.Context, o importer.Owner, slot string) error {
	return importer.DeleteOwnedPods(ctx, e.kube, o, importer.PodSelector(slot), func(p *corev1.Pod) bool {
		return p.Labels[importer.LabelImageCheck] == ""
	})
}

func (p *podImporter) Method() string                  { return Method }
func (p *podImporter) Refuses(system.MediaSlot) string { return "" }

func (p *podImporter) Watch(ctx context.Context, namespaces []string, enqueue func(obj any)) ([]cache.InformerSynced, error) {
	var synced []cache.InformerSynced
	for _, ns := range namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(p.d.Kube, 0,
			informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = importer.PodSelector("").String() }))
		pods := f.Core().V1().Pods()
		if err := pods.Informer().SetTransform(importer.TrimCachedPods(p.d.ImportPods)); err != nil {
			return nil, fmt.Errorf("import pods: %w", err)
		}
		if _, err := pods.Informer().AddEventHandler(importer.HandlerFor(enqueue)); err != nil {
			return nil, fmt.Errorf("import pods: add handler: %w", err)
		}
		synced = append(synced, pods.Informer().HasSynced)
		p.pods = append(p.pods, pods.Lister())
		f.Start(ctx.Done())
		context.AfterFunc(ctx, f.Shutdown)
	}
	return synced, nil
}

// listPods returns the cached import pods of the VM's slot ("": all).
func (p *podImporter) listPods(o importer.Owner, slot string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, l := range p.pods {
		pods, err := l.Pods(o.Key.Namespace).List(importer.PodSelector(slot))
		if err != nil {
			return nil, fmt.Errorf("list import pods of %s: %w", o.Key, err)
		}
		for _, pod := range pods {
			if o.Owns(pod) && importer.CachedPodSigned(pod) {
				out = append(out, pod)
			}
		}
	}
	return out, nil
}

func (p *podImporter) Observe(ctx context.Context, t importer.Target) (importer.Status, error) {
	o, slot := t.Owner, t.Slot
	pods, err := p.listPods(o, slot.Slot)
	if err != nil {
		return importer.Status{}, err
	}
	var current *corev1.Pod
	others := 0
	for _, pod := range pods {
		if pod.Labels[importer.LabelInsertID] == slot.InsertID {
			current = pod
			continue
		}
		others++
		if pod.DeletionTimestamp == nil {
			if err := importer.DeletePod(ctx, p.d.Kube, pod); err != nil {
				return importer.Status{}, err
			}
			p.d.Counters.StalePodDeleted()
			logctx.From(ctx).InfoContext(ctx, "deleted import pod of an older insert", "vm", o.Key.String(), "slot", slot.Slot, "pod", pod.Name)
		}
	}
	switch {
	case current != nil && current.DeletionTimestamp != nil:
		return importer.Status{State: importer.Waiting}, nil // deleted after it reported (its deletion is an event)
	case current != nil:
		st := podStatus(current)
		if st.State == importer.Succeeded && slot.CacheKey != "" {
			return p.checkCopy(ctx, o.Key.Namespace, importer.CacheClaimName(slot.CacheKey), current, st)
		}
		return p.withProgress(ctx, current, st), nil
	case others > 0:
		// Never two imports into one PVC: wait until the older pods are gone
		// (their deletion is an event).
		return importer.Status{State: importer.Waiting}, nil
	}
	if slot.Phase == system.MediaImporting {
		// Our pod cache may lag behind our own create: ask before re-creating.
		name := importer.PodName(slot.ClaimName, slot.InsertID)
		live, err := p.d.Kube.CoreV1().Pods(o.Key.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if err := p.ours(o, live); err != nil {
				return importer.Status{}, err
			}
			return importer.Status{State: importer.Running}, nil // its events will follow
		}
		if !apierrors.IsNotFound(err) {
			return importer.Status{}, fmt.Errorf("get import pod %s/%s: %w", o.Key.Namespace, name, err)
		}
	}
	// The image's size is known only once an import pod reported it (the
	// bridge itself never contacts the image server): until then the PVC
	// gets DefaultSize.
	exists, ready, claimSize, err := p.checkClaim(ctx, o, slot, slot.SizeBytes)
	if err != nil || !ready {
		return importer.Status{State: importer.Waiting}, err
	}
	n := next{claimExists: exists, claimSize: claimSize}
	if slot.CacheKey != "" {
		// The entry holds what the slot's PVC holds: at least as large.
		if n.cacheExists, ready, err = p.checkCacheEntry(ctx, o, slot, claimSize); err != nil || !ready {
			return importer.Status{State: importer.Waiting}, err
		}
	}
	return importer.Status{State: importer.Absent, Next: n}, nil
}

// podStatus reads an import pod.
func podStatus(pod *corev1.Pod) importer.Status {
	st := importer.Status{State: importer.Running, Started: pod.CreationTimestamp.Time}
	res, ok := download.ParseImportResult(importer.TerminationMessage(pod))
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		st.State = importer.Succeeded
	case corev1.PodFailed:
		st.State, st.Reason = importer.Failed, importer.TerminationMessage(pod)
		if st.Reason == "" {
			st.Reason = "import pod failed"
		}
	default:
		return st
	}
	if ok && res.NeedBytes > 0 {
		st.State, st.Bytes = importer.NeedsRoom, res.NeedBytes
	} else if ok {
		st.Bytes = res.Bytes
	}
	return st
}

func (p *podImporter) Start(ctx context.Context, t importer.Target, st importer.Status) error {
	key, slot := t.Owner.Key, t.Slot
	n, _ := st.Next.(next)
	if !n.claimExists {
		if err := p.createClaim(ctx, t.Owner, slot, slot.SizeBytes); err != nil {
			return err
		}
	}
	req := download.ImportRequest{
		Policy: p.d.Options.AddrPolicy, Timeout: p.d.Options.ImportTimeout,
		MaxBytes: p.d.Options.MaxImageSize, ClaimSize: n.claimSize,
	}
	if slot.CacheKey != "" {
		// No eviction between the check of which entries are in use and
		// this pod's create.
		p.d.Cache.Lock()
		defer p.d.Cache.Unlock()
		entry := importer.CacheClaimName(slot.CacheKey)
		p.d.Cache.Used(key.Namespace, entry)
		if n.cacheExists && p.d.Options.ImageCacheBudget > 0 {
			// Evicted since observe looked (the cache may not show it yet)?
			// Then no pod: the error retries, and observe waits for the
			// entry to go and starts over.
			gone, err := p.entryGoing(ctx, key.Namespace, entry)
			if err != nil {
				return err
			}
			if gone {
				return fmt.Errorf("image cache PVC %s/%s was evicted before the import pod of %s was created; retrying", key.Namespace, entry, key)
			}
		}
		created := false
		if !n.cacheExists {
			if err := p.evictFor(ctx, key.Namespace, entry, n.claimSize); err != nil {
				return err
			}
			var err error
			if created, err = p.createCacheEntry(ctx, t.Owner, slot, n.claimSize); err != nil {
				return err
			}
		}
		podKey := key.Namespace + "/" + importer.PodName(slot.ClaimName, slot.InsertID)
		refill := p.refills.take(podKey)
		var err error
		if req.CacheSHA256, req.CacheRefill, err = p.entryFlags(ctx, key.Namespace, entry, created, refill); err != nil {
			if refill {
				p.refills.add(podKey)
			}
			return err
		}
	}
	pod := importer.PodFor(t.Owner, slot, p.d.Options.ImporterImage, req)
	importer.SignPod(p.d.ImportPods, pod)
	_, err := p.d.Kube.CoreV1().Pods(key.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	switch {
	case err == nil:
		p.d.Counters.PodCreated()
		logctx.From(ctx).InfoContext(ctx, "import pod created", "vm", key.String(), "slot", slot.Slot, "pod", pod.Name, "insertID", slot.InsertID)
	case apierrors.IsAlreadyExists(err): // our cache lags, another replica made it, or it was planted
		live, err := p.d.Kube.CoreV1().Pods(key.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get import pod %s/%s: %w", key.Namespace, pod.Name, err)
		}
		if err := p.ours(t.Owner, live); err != nil {
			return err
		}
		logctx.From(ctx).DebugContext(ctx, "import pod exists", "vm", key.String(), "pod", pod.Name)
	default:
		return fmt.Errorf("create import pod %s/%s: %w", key.Namespace, pod.Name, err)
	}
	return nil
}

// ours is nil when live (read whole from the apiserver) is an import pod
// the bridge made for o: its labels, owner reference and MAC
// (importer.PodSigned); else a [*importer.ForeignClaimError], which fails
// the insert naming the pod and leaves it.
func (p *podImporter) ours(o importer.Owner, live *corev1.Pod) error {
	if o.Owns(live) && importer.PodSigned(p.d.ImportPods, live) {
		return nil
	}
	return &importer.ForeignClaimError{Namespace: live.Namespace, Name: live.Name, VM: o.Key, Kind: "pod"}
}

// finish deletes the current insert's pod (an ended pod has reported).
func (p *podImporter) Finish(ctx context.Context, t importer.Target) error {
	pods, err := p.listPods(t.Owner, t.Slot.Slot)
	if err != nil {
		return err
	}
	for _, pod := range pods {
		if pod.Labels[importer.LabelInsertID] == t.Slot.InsertID && pod.DeletionTimestamp == nil {
			if err := importer.DeletePod(ctx, p.d.Kube, pod); err != nil {
				return err
			}
		}
	}
	return nil
}

// settle deletes every import pod of a slot that is not importing.
func (p *podImporter) Settle(ctx context.Context, t importer.Target) error {
	pods, err := p.listPods(t.Owner, t.Slot.Slot)
	if err != nil {
		return err
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if err := importer.DeletePod(ctx, p.d.Kube, pod); err != nil {
			return err
		}
		if pod.Labels[importer.LabelInsertID] != t.Slot.InsertID {
			p.d.Counters.StalePodDeleted()
			logctx.From(ctx).InfoContext(ctx, "deleted import pod of an older insert", "vm", t.Owner.Key.String(), "slot", t.Slot.Slot, "pod", pod.Name)
		}
	}
	return nil
}

func (p *podImporter) Orphans(o importer.Owner) ([]metav1.Object, error) {
	return importer.Objects(p.listPods(o, ""))
}

func (p *podImporter) Remove(ctx context.Context, obj metav1.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("import pod method: cannot remove a %T", obj)
	}
	return importer.DeletePod(ctx, p.d.Kube, pod)
}
