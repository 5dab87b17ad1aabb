package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic/dynamicinformer"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/redfish-bridge/redfish-bridge/media"
)

// The node side of CDI: the pods CDI's own cdi-controller makes run as the
// simulated kubelet's processes (cdiimporter.go reads them the way CDI's
// importer image does). CDI's controller itself runs from source
// (testcluster's Options.CDI).
const (
	// CDIImporterSelector selects the importer pods cdi-controller makes
	// (labels cdi.kubevirt.io=importer, app=containerized-data-importer).
	CDIImporterSelector = "cdi.kubevirt.io=importer"
	// cdiImporterContainer is the importer pod's container (CDI's
	// common.ImporterPodName); its env carries the import.
	cdiImporterContainer = "importer"
	// cdiDataVolume is the importer pod's volume of the target PVC (CDI's
	// DataVolName).
	cdiDataVolume = "cdi-data-vol"
)

// RunCDINode plays the node side of CDI's pods, and the garbage collector
// of what CDI's objects own, until ctx ends: it binds
// each importer pod cdi-controller makes in the simulator's namespaces to
// the node, runs it as a process of the simulated kubelet (the import its
// environment asks for, written into the PVC's simulated storage) and
// reports its end the way the kubelet does (container status, termination
// message). Run it beside [Simulator.Run] on a cluster running CDI's
// cdi-controller.
//
// With podIP (testcluster's CDIPodIP) the running pods get that pod IP
// and their metrics are served at https://<podIP>:8443/metrics as CDI's
// importer serves them (kubevirt_cdi_import_progress_total{ownerUID=...}),
// where cdi-controller reads the progress it writes into the
// DataVolume's status.progress; without, they have no pod IP and
// cdi-controller reads no progress.
func (s *Simulator) RunCDINode(ctx context.Context, podIP string) error {
	namespaces := s.opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	n := &cdiNode{s: s, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		progress: map[string]float64{}}
	if podIP != "" {
		if err := n.serveMetrics(ctx, podIP); err != nil {
			return err
		}
	}
	var synced []cache.InformerSynced
	for _, ns := range namespaces {
		inf := coreinformers.NewFilteredPodInformer(s.kube, ns, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
			o.LabelSelector = CDIImporterSelector
		})
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { n.queue.Add(key(obj)) },
			UpdateFunc: func(_, obj any) { n.queue.Add(key(obj)) },
			DeleteFunc: func(obj any) { s.forgetPod(obj); n.queue.Add(key(obj)) },
		}); err != nil {
			return fmt.Errorf("sim: CDI importer pod handler: %w", err)
		}
		n.stores = append(n.stores, inf.GetStore())
		synced = append(synced, inf.HasSynced)
		go inf.RunWithContext(ctx)
		dvs := dynamicinformer.NewFilteredDynamicInformer(s.dyn, media.DataVolumeResource, ns, 0, cache.Indexers{}, nil).Informer()
		if _, err := dvs.AddEventHandler(cache.ResourceEventHandlerFuncs{
			DeleteFunc: func(obj any) { n.collect(ctx, obj) },
		}); err != nil {
			return fmt.Errorf("sim: DataVolume handler: %w", err)
		}
		synced = append(synced, dvs.HasSynced)
		go dvs.RunWithContext(ctx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil // stopped before it started
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			k, quit := n.queue.Get()
			if quit {
				return
			}
			after, err := n.sync(ctx, k)
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.WarnContext(ctx, "CDI importer pod sync", "pod", k, "error", err)
				n.queue.AddRateLimited(k)
			case after > 0:
				n.queue.AddAfter(k, after)
			default:
				n.queue.Forget(k)
			}
			n.queue.Done(k)
		}
	})
	<-ctx.Done()
	n.queue.ShutDown()
	wg.Wait()
	s.downloadWG.Wait()
	return nil
}

// cdiNode is the simulated node's side of CDI's pods.
type cdiNode struct {
	s      *Simulator
	queue  workqueue.TypedRateLimitingInterface[string]
	stores []cache.Store
	podIP  string // the running pods' IP; "" without metrics
	mu     sync.Mutex
	// progress is each running import's percentage, by its OWNER_UID.
	progress map[string]float64
}

func (n *cdiNode) get(k string) *corev1.Pod {
	for _, st := range n.stores {
		if obj, ok, _ := st.GetByKey(k); ok {
			p, _ := obj.(*corev1.Pod)
			return p
		}
	}
	return nil
}

// sync plays the scheduler and the kubelet for one CDI pod.
func (n *cdiNode) sync(ctx context.Context, k string) (time.Duration, error) {
	s := n.s
	pod := n.get(k)
	if pod == nil {
		return 0, nil
	}
	if pod.DeletionTimestamp != nil {
		s.cancelDownload(pod.UID)
		return 0, s.confirmDeletion(ctx, pod)
	}
	if gone, err := n.ownerGone(ctx, pod); gone || err != nil {
		return 0, err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || s.importBusy(pod.UID) {
		return 0, nil
	}
	if pod.Spec.NodeName == "" {
		return 0, s.bindPod(ctx, pod) // the binding's update event brings the pod back
	}
	if wait := cdiBackOff(pod, time.Now()); wait > 0 {
		return wait, nil // CrashLoopBackOff: the kubelet restarts it later
	}
	claim := cdiClaim(pod)
	if claim == "" {
		return 0, nil // not a pod this node knows how to run
	}
	if holder := s.claimUser(pod.Namespace, claim, false); holder != "" {
		if s.once(s.refused, pod.UID) {
			s.multiAttachRefusals.Add(1)
			s.event(ctx, podRef(pod), eventWarning, ReasonMultiAttach, fmt.Sprintf(
				"Multi-Attach error for volume %q Volume is already used by pod(s) %s", claim, holder), "attachdetach-controller")
		}
		return volumeRetry, nil
	}
	return 0, n.startImporter(ctx, pod, claim)
}

// cdiClaim is the PVC of the pod's volume cdiDataVolume, "" if none.
func cdiClaim(pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		if v.Name == cdiDataVolume && v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

// cdiBackOff is how long the kubelet waits before it restarts the pod's
// failed container: 10 s doubled per restart, at most 5 min; 0 when it
// did not fail.
func cdiBackOff(pod *corev1.Pod, now time.Time) time.Duration {
	if len(pod.Status.ContainerStatuses) == 0 {
		return 0
	}
	cs := pod.Status.ContainerStatuses[0]
	t := cs.State.Terminated
	if t == nil || t.ExitCode == 0 {
		return 0
	}
	backoff := min(10*time.Second<<min(cs.RestartCount, 5), 5*time.Minute)
	return max(t.FinishedAt.Add(backoff).Sub(now), 0)
}

// collect plays kube-controller-manager's garbage collector for a
// DataVolume deleted: the PVCs it controls are deleted (background
// propagation).
func (n *cdiNode) collect(ctx context.Context, obj any) {
	dv := asUnstructured(obj)
	if dv == nil {
		return
	}
	api := n.s.kube.CoreV1().PersistentVolumeClaims(dv.GetNamespace())
	l, err := api.List(ctx, metav1.ListOptions{})
	if err != nil {
		n.s.log.WarnContext(ctx, "garbage collector: list PVCs", "error", err)
		return
	}
	for _, pvc := range l.Items {
		if ref := metav1.GetControllerOf(&pvc); ref == nil || ref.UID != dv.GetUID() || pvc.DeletionTimestamp != nil {
			continue
		}
		err := api.Delete(ctx, pvc.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pvc.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			n.s.log.WarnContext(ctx, "garbage collector: delete PVC", "pvc", pvc.Namespace+"/"+pvc.Name, "error", err)
		}
	}
}

// ownerGone plays the garbage collector for a pod whose controlling PVC
// is gone: it deletes the pod and reports true.
func (n *cdiNode) ownerGone(ctx context.Context, pod *corev1.Pod) (bool, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "PersistentVolumeClaim" {
		return false, nil
	}
	pvc, err := n.s.kube.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("owner of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if err == nil && pvc.UID == ref.UID {
		return false, nil
	}
	n.s.cancelDownload(pod.UID)
	err = n.s.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return true, fmt.Errorf("garbage collector: delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return true, nil
}
