package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// GroupVersionResources the simulator watches.
var (
	VMResource  = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	VMIResource = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}
)

// nsCaches are the informers of one watched namespace ("" = all).
type nsCaches struct {
	vm, vmi, pod, launcher, pvc cache.SharedIndexInformer
}

func (s *Simulator) newCaches() map[string]*nsCaches {
	namespaces := s.opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	out := make(map[string]*nsCaches, len(namespaces))
	for _, ns := range namespaces {
		out[ns] = &nsCaches{
			vm:  dynamicinformer.NewFilteredDynamicInformer(s.dyn, VMResource, ns, 0, indexers, nil).Informer(),
			vmi: dynamicinformer.NewFilteredDynamicInformer(s.dyn, VMIResource, ns, 0, indexers, nil).Informer(),
			pod: coreinformers.NewFilteredPodInformer(s.kube, ns, 0, indexers, func(o *metav1.ListOptions) {
				o.LabelSelector = ImporterSelector
			}),
			launcher: coreinformers.NewFilteredPodInformer(s.kube, ns, 0, indexers, func(o *metav1.ListOptions) {
				o.LabelSelector = podsSelector // launcher and attachment pods
			}),
			pvc: coreinformers.NewPersistentVolumeClaimInformer(s.kube, ns, 0, indexers),
		}
	}
	return out
}

// startCaches registers the event handlers, starts the informers and waits
// for their first list.
func (s *Simulator) startCaches(ctx context.Context) error {
	var synced []cache.InformerSynced
	for _, c := range s.caches {
		handlers := []struct {
			inf      cache.SharedIndexInformer
			on, gone func(obj any)
		}{
			{c.vm, func(obj any) { s.queues.vm.Add(key(obj)) }, nil},
			{c.vmi, s.onVMI, s.forgetVMI},
			{c.pod, s.onPod, s.forgetPod},
			{c.launcher, s.onLauncher, s.forgetLauncher},
			{c.pvc, s.onPVC, nil},
		}
		for _, h := range handlers {
			on, gone := h.on, h.gone
			_, err := h.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    on,
				UpdateFunc: func(_, obj any) { on(obj) },
				DeleteFunc: func(obj any) {
					if gone != nil {
						gone(obj)
					}
					on(obj)
				},
			})
			if err != nil {
				return fmt.Errorf("sim: add event handler: %w", err)
			}
			go h.inf.RunWithContext(ctx)
			synced = append(synced, h.inf.HasSynced)
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("sim: caches did not sync: %w", context.Cause(ctx))
	}
	return nil
}

func key(obj any) string {
	k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return ""
	}
	return k
}

// onVMI: the VMI itself, its VM, and everything waiting for a volume in its
// namespace (import pods refused with Multi-Attach, PVCs being deleted).
func (s *Simulator) onVMI(obj any) {
	k := key(obj)
	s.queues.vmi.Add(k)
	if u := asUnstructured(obj); u != nil {
		s.enqueueVolumeUsers(u.GetNamespace())
		s.enqueueLaunchers(u.GetNamespace())
	}
}

// onLauncher: the pod itself and, for an attachment pod, everything waiting
// for a volume in its namespace (a PVC being deleted it held).
func (s *Simulator) onLauncher(obj any) {
	s.queues.launcher.Add(key(obj))
	if pod := asPod(obj); pod != nil && isAttachmentPod(pod) {
		s.enqueueVolumeUsers(pod.Namespace)
	}
}

// asUnstructured unwraps tombstones.
func asUnstructured(obj any) *unstructured.Unstructured {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

// asPod unwraps tombstones.
func asPod(obj any) *corev1.Pod {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, _ := obj.(*corev1.Pod)
	return p
}

func (s *Simulator) onPod(obj any) {
	s.queues.pod.Add(key(obj))
	if pod := asPod(obj); pod != nil {
		if claim := podClaim(pod); claim != "" {
			s.queues.pvc.Add(pod.Namespace + "/" + claim)
		}
	}
}

func (s *Simulator) onPVC(obj any) {
	k := key(obj)
	s.queues.pvc.Add(k)
	if ns, _, err := cache.SplitMetaNamespaceKey(k); err == nil {
		s.enqueueVolumeUsers(ns)
	}
}

// enqueueVolumeUsers requeues the pending import pods and the PVCs of a
// namespace: whether they may proceed depends on the VMIs there.
func (s *Simulator) enqueueVolumeUsers(ns string) {
	c := s.cachesFor(ns)
	if c == nil {
		return
	}
	pods, _ := c.pod.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	for _, o := range pods {
		if pod, ok := o.(*corev1.Pod); ok && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			s.queues.pod.Add(key(pod))
		}
	}
	pvcs, _ := c.pvc.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	for _, o := range pvcs {
		if pvc, ok := o.(*corev1.PersistentVolumeClaim); ok && pvc.DeletionTimestamp != nil {
			s.queues.pvc.Add(key(pvc))
		}
	}
}

// cachesFor returns the informers that see namespace ns, nil if it is not
// watched.
func (s *Simulator) cachesFor(ns string) *nsCaches {
	if c, ok := s.caches[ns]; ok {
		return c
	}
	return s.caches[metav1.NamespaceAll]
}

// getU returns the cached object at key from the informer chosen by pick.
func (s *Simulator) getU(k string, pick func(*nsCaches) cache.SharedIndexInformer) *unstructured.Unstructured {
	ns, _, err := cache.SplitMetaNamespaceKey(k)
	c := s.cachesFor(ns)
	if err != nil || c == nil {
		return nil
	}
	obj, ok, err := pick(c).GetIndexer().GetByKey(k)
	if err != nil || !ok {
		return nil
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

func vmInformer(c *nsCaches) cache.SharedIndexInformer  { return c.vm }
func vmiInformer(c *nsCaches) cache.SharedIndexInformer { return c.vmi }

// syncFunc reconciles one key; a positive duration asks to be called again
// after it.
type syncFunc func(ctx context.Context, key string) (time.Duration, error)

type queues struct {
	vm, vmi, pod, launcher, pvc workqueue.TypedRateLimitingInterface[string]
}

func newQueues() queues {
	q := func(name string) workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "sim-" + name},
		)
	}
	return queues{vm: q("vm"), vmi: q("vmi"), pod: q("pod"), launcher: q("launcher"), pvc: q("pvc")}
}

func (q queues) shutDown() {
	for _, w := range []workqueue.TypedRateLimitingInterface[string]{q.vm, q.vmi, q.pod, q.launcher, q.pvc} {
		w.ShutDown()
	}
}

// run starts the workers; they stop when the queues shut down.
func (q queues) run(ctx context.Context, wg *sync.WaitGroup, s *Simulator) {
	workers := []struct {
		q    workqueue.TypedRateLimitingInterface[string]
		sync syncFunc
		n    int
	}{
		{q.vm, s.observeVM, 1},
		{q.vmi, s.syncVMI, 2},
		{q.pod, s.syncPod, 2},
		{q.launcher, s.syncLauncher, 2},
		{q.pvc, s.syncPVC, 1},
	}
	for _, w := range workers {
		for range w.n {
			wg.Go(func() {
				for s.process(ctx, w.q, w.sync) {
				}
			})
		}
	}
}

func (s *Simulator) process(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], sync syncFunc) bool {
	k, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(k)
	if k == "" {
		return true
	}
	after, err := sync(ctx, k)
	switch {
	case err != nil && (apierrors.IsConflict(err) || ctx.Err() != nil):
		q.AddRateLimited(k) // a stale read; retry from a fresh one
	case err != nil:
		s.log.WarnContext(ctx, "sync failed, retrying", "key", k, "error", err)
		q.AddRateLimited(k)
	case after > 0:
		q.Forget(k)
		q.AddAfter(k, after)
	default:
		q.Forget(k)
	}
	return true
}
