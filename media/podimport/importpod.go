package media

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The import pod: the bridge's own image runs `redfish-bridge import`
// ([download.RunImport]) with the slot's PVC and import Secret mounted; the PVC is
// the bridge's, sized [download.ClaimSize] and re-created larger when the pod
// reports an image that does not fit. Always available.

func init() {
	registerImporter(ImportMethodPod, 0, func(_ context.Context, r *Reconciler) (Importer, bool, error) {
		return &podImporter{podEjector: podEjector{r.opts.Kube}, r: r}, true, nil
	}, func(kube kubernetes.Interface) ejector { return podEjector{kube} })
}

type podImporter struct {
	podEjector
	r    *Reconciler
	pods []corelisters.PodLister
	// progress holds the last reads of running import pods' logs (podprogress.go).
	progress podProgress
}

// podEjector deletes the slot's import pods (not the CDI method's check
// pods) on eject.
type podEjector struct{ kube kubernetes.Interface }

func (e podEjector) eject(ctx context.Context, o owner, slot string) error {
	return deleteOwnedPods(ctx, e.kube, o, importerSelector(slot), func(p *corev1.Pod) bool {
		return p.Labels[LabelImageCheck] == ""
	})
}

func (p *podImporter) method() string                  { return ImportMethodPod }
func (p *podImporter) refuses(system.MediaSlot) string { return "" }

func (p *podImporter) watch(ctx context.Context, namespaces []string, enqueue func(obj any)) ([]cache.InformerSynced, error) {
	var synced []cache.InformerSynced
	for _, ns := range namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(p.r.opts.Kube, 0,
			informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = importerSelector("").String() }))
		pods := f.Core().V1().Pods()
		if _, err := pods.Informer().AddEventHandler(handlerFor(enqueue)); err != nil {
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
func (p *podImporter) listPods(o owner, slot string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, l := range p.pods {
		pods, err := l.Pods(o.key.Namespace).List(importerSelector(slot))
		if err != nil {
			return nil, fmt.Errorf("list import pods of %s: %w", o.key, err)
		}
		for _, pod := range pods {
			if o.owns(pod) {
				out = append(out, pod)
			}
		}
	}
	return out, nil
}

func (p *podImporter) observe(ctx context.Context, t importTarget) (importStatus, error) {
	r, o, slot := p.r, t.o, t.slot
	pods, err := p.listPods(o, slot.Slot)
	if err != nil {
		return importStatus{}, err
	}
	var current *corev1.Pod
	others := 0
	for _, pod := range pods {
		if pod.Labels[LabelInsertID] == slot.InsertID {
			current = pod
			continue
		}
		others++
		if pod.DeletionTimestamp == nil {
			if err := deletePod(ctx, r.opts.Kube, pod); err != nil {
				return importStatus{}, err
			}
			r.c.stale.Add(1)
			logctx.From(ctx).InfoContext(ctx, "deleted import pod of an older insert", "vm", o.key.String(), "slot", slot.Slot, "pod", pod.Name)
		}
	}
	switch {
	case current != nil && current.DeletionTimestamp != nil:
		return importStatus{state: importWaiting}, nil // deleted after it reported (its deletion is an event)
	case current != nil:
		return p.withProgress(ctx, current, podStatus(current)), nil
	case others > 0:
		// Never two imports into one PVC: wait until the older pods are gone
		// (their deletion is an event).
		return importStatus{state: importWaiting}, nil
	}
	if slot.Phase == system.MediaImporting {
		// Our pod cache may lag behind our own create: ask before re-creating.
		name := PodName(slot.ClaimName, slot.InsertID)
		_, err := r.opts.Kube.CoreV1().Pods(o.key.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return importStatus{state: importRunning}, nil // its events will follow
		}
		if !apierrors.IsNotFound(err) {
			return importStatus{}, fmt.Errorf("get import pod %s/%s: %w", o.key.Namespace, name, err)
		}
	}
	// The image's size is known only once an import pod reported it (the
	// bridge itself never contacts the image server): until then the PVC
	// gets DefaultSize.
	exists, ready, claimSize, err := r.checkClaim(ctx, o, slot, slot.SizeBytes)
	if err != nil || !ready {
		return importStatus{state: importWaiting}, err
	}
	st := importStatus{state: importAbsent, claimExists: exists, claimSize: claimSize}
	if slot.CacheKey != "" {
		// The entry holds what the slot's PVC holds: at least as large.
		if st.cacheExists, ready, err = r.checkCacheEntry(ctx, o, slot, claimSize); err != nil || !ready {
			return importStatus{state: importWaiting}, err
		}
	}
	return st, nil
}

// podStatus reads an import pod.
func podStatus(pod *corev1.Pod) importStatus {
	st := importStatus{state: importRunning, started: pod.CreationTimestamp.Time}
	res, ok := download.ParseImportResult(terminationMessage(pod))
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		st.state = importSucceeded
	case corev1.PodFailed:
		st.state, st.reason = importFailed, terminationMessage(pod)
		if st.reason == "" {
			st.reason = "import pod failed"
		}
	default:
		return st
	}
	if ok && res.NeedBytes > 0 {
		st.state, st.bytes = importNeedsRoom, res.NeedBytes
	} else if ok {
		st.bytes = res.Bytes
	}
	return st
}

func (p *podImporter) start(ctx context.Context, t importTarget, st importStatus) error {
	r, key, slot := p.r, t.o.key, t.slot
	if !st.claimExists {
		if err := r.createClaim(ctx, t.o, slot, slot.SizeBytes); err != nil {
			return err
		}
	}
	if slot.CacheKey != "" {
		// No eviction between the check of which entries are in use and
		// this pod's create.
		r.cacheMu.Lock()
		defer r.cacheMu.Unlock()
		entry := CacheClaimName(slot.CacheKey)
		r.used(key.Namespace, entry)
		if st.cacheExists && r.opts.ImageCacheBudget > 0 {
			// Evicted since observe looked (the cache may not show it yet)?
			// Then no pod: the error retries, and observe waits for the
			// entry to go and starts over.
			gone, err := r.entryGoing(ctx, key.Namespace, entry)
			if err != nil {
				return err
			}
			if gone {
				return fmt.Errorf("image cache PVC %s/%s was evicted before the import pod of %s was created; retrying", key.Namespace, entry, key)
			}
		}
		if !st.cacheExists {
			if err := r.evictFor(ctx, key.Namespace, entry, st.claimSize); err != nil {
				return err
			}
			if err := r.createCacheEntry(ctx, t.o, slot, st.claimSize); err != nil {
				return err
			}
		}
	}
	pod := podFor(t.o, slot, r.opts.ImporterImage, download.ImportRequest{
		Policy: r.opts.AddrPolicy, Timeout: r.opts.ImportTimeout,
		MaxBytes: r.opts.MaxImageSize, ClaimSize: st.claimSize,
	})
	_, err := r.opts.Kube.CoreV1().Pods(key.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	switch {
	case err == nil:
		r.c.podsCreated.Add(1)
		logctx.From(ctx).InfoContext(ctx, "import pod created", "vm", key.String(), "slot", slot.Slot, "pod", pod.Name, "insertID", slot.InsertID)
	case apierrors.IsAlreadyExists(err): // our cache lags, or another replica made it
		logctx.From(ctx).DebugContext(ctx, "import pod exists", "vm", key.String(), "pod", pod.Name)
	default:
		return fmt.Errorf("create import pod %s/%s: %w", key.Namespace, pod.Name, err)
	}
	return nil
}

// finish deletes the current insert's pod (an ended pod has reported).
func (p *podImporter) finish(ctx context.Context, t importTarget) error {
	pods, err := p.listPods(t.o, t.slot.Slot)
	if err != nil {
		return err
	}
	for _, pod := range pods {
		if pod.Labels[LabelInsertID] == t.slot.InsertID && pod.DeletionTimestamp == nil {
			if err := deletePod(ctx, p.r.opts.Kube, pod); err != nil {
				return err
			}
		}
	}
	return nil
}

// settle deletes every import pod of a slot that is not importing.
func (p *podImporter) settle(ctx context.Context, t importTarget) error {
	pods, err := p.listPods(t.o, t.slot.Slot)
	if err != nil {
		return err
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if err := deletePod(ctx, p.r.opts.Kube, pod); err != nil {
			return err
		}
		if pod.Labels[LabelInsertID] != t.slot.InsertID {
			p.r.c.stale.Add(1)
			logctx.From(ctx).InfoContext(ctx, "deleted import pod of an older insert", "vm", t.o.key.String(), "slot", t.slot.Slot, "pod", pod.Name)
		}
	}
	return nil
}

func (p *podImporter) orphans(o owner) ([]metav1.Object, error) { return objects(p.listPods(o, "")) }

func (p *podImporter) remove(ctx context.Context, obj metav1.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("import pod method: cannot remove a %T", obj)
	}
	return deletePod(ctx, p.r.opts.Kube, pod)
}

// handlerFor enqueues the owner of every object an informer reports.
func handlerFor(enqueue func(obj any)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}
}
