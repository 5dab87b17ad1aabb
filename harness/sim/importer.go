package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/redfish-bridge/redfish-bridge/media/download"
)

// The import pod contract (media/ creates these pods).
const (
	// ImporterSelector selects the pods the simulator runs; others are left
	// alone.
	ImporterSelector = "app.kubernetes.io/component=importer,app.kubernetes.io/part-of=redfish-bridge"
	// ImporterContainer is the container whose args carry --url= and --dest=.
	ImporterContainer = "importer"
	// ReasonMultiAttach is the Warning event reason on a refused pod.
	ReasonMultiAttach = "FailedAttachVolume"
)

// importJob is what an import pod asks for.
type importJob struct {
	req   download.ImportRequest
	claim string
}

// parseImportPod reads the contract from an import pod: the importer
// container's flags, parsed by media itself, and the pod's PVC.
func parseImportPod(pod *corev1.Pod) (importJob, error) {
	job := importJob{claim: podClaim(pod)}
	var flags []string
	for _, c := range pod.Spec.Containers {
		if c.Name != ImporterContainer {
			continue
		}
		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			if strings.HasPrefix(a, "-") {
				flags = append(flags, a)
			}
		}
	}
	req, err := download.ParseImportArgs(flags)
	if err != nil {
		return job, fmt.Errorf("import pod %s/%s: container %q: %w", pod.Namespace, pod.Name, ImporterContainer, err)
	}
	if job.claim == "" && !req.HeadOnly { // a --head-only check writes nothing
		return job, fmt.Errorf("import pod %s/%s: no persistentVolumeClaim volume", pod.Namespace, pod.Name)
	}
	job.req = req
	return job, nil
}

// podClaim is the claim of the pod's first PVC volume, "" if none.
func podClaim(pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

// PodSynced is the resourceVersion of import pod key ("namespace/name") as
// the simulator's last finished sync of it read it ("": none yet). A test
// waits for it to reach a write of its own to know that the simulator has
// acted on that write (what the sync wrote is written by then).
func (s *Simulator) PodSynced(key string) string {
	v, _ := s.podSynced.Load(key)
	rv, _ := v.(string)
	return rv
}

// syncPod plays the scheduler and the kubelet for one import pod.
func (s *Simulator) syncPod(ctx context.Context, k string) (time.Duration, error) {
	ns, _, err := cache.SplitMetaNamespaceKey(k)
	c := s.cachesFor(ns)
	if err != nil || c == nil {
		return 0, nil
	}
	obj, exists, err := c.pod.GetIndexer().GetByKey(k)
	if err != nil || !exists {
		return 0, err
	}
	pod := obj.(*corev1.Pod)
	defer s.podSynced.Store(k, pod.ResourceVersion)
	if pod.DeletionTimestamp != nil {
		s.cancelDownload(pod.UID)
		s.kubelet.forget(pod)
		return 0, s.confirmDeletion(ctx, pod)
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || s.importBusy(pod.UID) {
		return 0, nil
	}
	if pod.Spec.NodeName == "" {
		return 0, s.bindPod(ctx, pod) // the binding's update event brings the pod back
	}
	job, err := parseImportPod(pod)
	if err != nil {
		s.finishImport(ctx, pod, err, err.Error())
		return 0, nil
	}
	if job.claim == "" { // a check pod: no PVC to attach
		mounted, err := s.mountVolumes(ctx, pod, &job)
		if err != nil {
			return volumeRetry, nil
		}
		return 0, s.startImport(ctx, pod, job, mounted)
	}
	pvcObj, exists, err := c.pvc.GetIndexer().GetByKey(ns + "/" + job.claim)
	if err != nil {
		return 0, fmt.Errorf("PVC cache: %w", err)
	}
	if !exists {
		if s.once(s.missingPVC, pod.UID) {
			s.event(ctx, podRef(pod), eventWarning, "FailedMount",
				fmt.Sprintf("persistentvolumeclaim %q not found", job.claim), "kubelet")
		}
		return 0, nil // requeued when a PVC appears
	}
	if readWriteOnce(pvcObj.(*corev1.PersistentVolumeClaim)) {
		if holder := s.claimUser(ns, job.claim, false); holder != "" {
			if s.once(s.refused, pod.UID) {
				s.multiAttachRefusals.Add(1)
				s.log.InfoContext(ctx, "import pod refused: Multi-Attach", "pod", k, "claim", job.claim, "holder", holder)
				s.event(ctx, podRef(pod), eventWarning, ReasonMultiAttach, fmt.Sprintf(
					"Multi-Attach error for volume %q Volume is already used by pod(s) %s", job.claim, holder), "attachdetach-controller")
			}
			return 0, nil // requeued when the VMI changes
		}
	}
	mounted, err := s.mountVolumes(ctx, pod, &job)
	if err != nil {
		if s.once(s.missingVolume, pod.UID) {
			s.event(ctx, podRef(pod), eventWarning, "FailedMount", err.Error(), "kubelet")
		}
		return volumeRetry, nil // the kubelet retries a missing Secret or ConfigMap
	}
	return 0, s.startImport(ctx, pod, job, mounted)
}

// startImport marks the pod Running and runs the bridge's import job in
// the background, against the pod's volumes as mounted under mounted.
func (s *Simulator) startImport(ctx context.Context, pod *corev1.Pod, job importJob, mounted string) error {
	// The download is cancellable before anything else: a deletion from
	// here on finds it (forgetPod), one before is seen in the cache below.
	dctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.downloads[pod.UID] = cancel
	s.mu.Unlock()
	if !s.podCached(pod) {
		s.cancelDownload(pod.UID)
		_ = os.RemoveAll(mounted)
		return nil
	}
	now := metav1.Now()
	err := s.updatePodStatus(ctx, pod, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodRunning
		st.StartTime = &now
		st.HostIP = "10.0.0.1"
		st.PodIP = "10.244.0.10"
		st.ContainerStatuses = containerStatuses(pod, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}})
	})
	if err != nil {
		s.cancelDownload(pod.UID)
		_ = os.RemoveAll(mounted)
		return err
	}
	s.importsStarted.Add(1)
	s.log.InfoContext(ctx, "import started", "pod", pod.Namespace+"/"+pod.Name, "url", job.req.URL, "claim", job.claim)
	s.downloadWG.Go(func() {
		defer cancel()
		defer os.RemoveAll(mounted) // the kubelet unmounts the volumes of a finished pod
		res, err := s.runImportLogged(dctx, pod, job)
		if err != nil && errors.Is(dctx.Err(), context.Canceled) {
			s.log.InfoContext(ctx, "import aborted", "pod", pod.Namespace+"/"+pod.Name, "error", err)
			return
		}
		s.finishImport(ctx, pod, err, download.TerminationMessage(res, err))
	})
	return nil
}

// podCached reports whether the pod (same UID) is still in the cache.
func (s *Simulator) podCached(pod *corev1.Pod) bool {
	c := s.cachesFor(pod.Namespace)
	if c == nil {
		return false
	}
	obj, exists, err := c.pod.GetIndexer().GetByKey(pod.Namespace + "/" + pod.Name)
	cached, ok := obj.(*corev1.Pod)
	return err == nil && exists && ok && cached.UID == pod.UID
}

// finishImport terminates the importer container with msg as termination
// message: exit 0, or exit 1 when importErr is set.
func (s *Simulator) finishImport(ctx context.Context, pod *corev1.Pod, importErr error, msg string) {
	phase, term := corev1.PodSucceeded, corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", Message: msg}
	if importErr != nil {
		phase, term = corev1.PodFailed, corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: msg}
	}
	now := metav1.Now()
	term.FinishedAt = now
	term.StartedAt = now
	if pod.Status.StartTime != nil {
		term.StartedAt = *pod.Status.StartTime
	}
	s.mu.Lock()
	s.finished[pod.UID] = true
	delete(s.downloads, pod.UID)
	s.mu.Unlock()
	// Counted before the pod's end is written: whoever sees the end (a
	// watch, the bridge) finds the run counted.
	s.countImportEnd(importErr, msg)
	err := s.updatePodStatus(ctx, pod, func(st *corev1.PodStatus) {
		st.Phase = phase
		st.Message = term.Message
		st.ContainerStatuses = containerStatuses(pod, corev1.ContainerState{Terminated: &term})
	})
	if err != nil {
		s.log.WarnContext(ctx, "finish import", "pod", pod.Namespace+"/"+pod.Name, "error", err)
		return
	}
	if importErr != nil {
		s.log.InfoContext(ctx, "import failed", "pod", pod.Namespace+"/"+pod.Name, "error", importErr)
		return
	}
	s.log.InfoContext(ctx, "import done", "pod", pod.Namespace+"/"+pod.Name, "message", msg)
}

// countImportEnd counts an import run that ended with importErr and its
// termination message msg: failed, a --head-only check, or succeeded
// (from the image cache or not).
func (s *Simulator) countImportEnd(importErr error, msg string) {
	if importErr != nil {
		s.importsFailed.Add(1)
		return
	}
	res, ok := download.ParseImportResult(msg)
	if ok && res.Validators != nil && res.Bytes == 0 {
		s.imageChecks.Add(1) // a --head-only check, not an import
		return
	}
	s.importsOK.Add(1)
	if ok && res.FromCache {
		s.importsFromCache.Add(1)
	}
}

func containerStatuses(pod *corev1.Pod, state corev1.ContainerState) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		running := state.Running != nil
		out = append(out, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "sim://" + c.Image,
			ContainerID: fmt.Sprintf("sim://%s/%s", pod.UID, c.Name),
			State:       state, Ready: running, Started: &running,
		})
	}
	return out
}

// updatePodStatus applies mutate to a fresh read of the pod (same UID) and
// writes it through the status subresource.
func (s *Simulator) updatePodStatus(ctx context.Context, pod *corev1.Pod, mutate func(*corev1.PodStatus)) error {
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		live, err := s.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if live.UID != pod.UID {
			return apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
		}
		mutate(&live.Status)
		_, err = s.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, live, metav1.UpdateOptions{FieldManager: "kubelet"})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("update status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}
