package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
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

// RunCDINode plays the node side of CDI's pods until ctx ends: it binds
// each importer pod cdi-controller makes in the simulator's namespaces to
// the node, runs it as a process of the simulated kubelet (the import its
// environment asks for, written into the PVC's simulated storage) and
// reports its end the way the kubelet does (container status, termination
// message). Run it beside [Simulator.Run] on a cluster running CDI's
// cdi-controller.
func (s *Simulator) RunCDINode(ctx context.Context) error {
	namespaces := s.opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	n := &cdiNode{s: s, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
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
