package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// NodeName is the node every virt-launcher and import pod runs on (the
// test cluster creates it, labelled schedulable for KubeVirt).
const NodeName = testcluster.NodeName

// LauncherSelector selects the virt-launcher pods virt-controller creates
// for VMIs.
const LauncherSelector = kubevirtv1.AppLabel + "=virt-launcher"

// syncLauncher plays the scheduler and the kubelet for a virt-launcher pod:
// bind it to NodeName, run it (phase Running, every container running and
// ready: virt-controller then hands the VMI to the node, phase Scheduled),
// end it once its VMI is final or gone (virt-launcher exits with the
// domain), and confirm its deletion (virt-controller deletes it with a
// grace period only a kubelet would end) once its guest has stopped
// (holdLauncher) and its teardown is over (teardownWait).
func (s *Simulator) syncLauncher(ctx context.Context, k string) (time.Duration, error) {
	ns, _, err := cache.SplitMetaNamespaceKey(k)
	c := s.cachesFor(ns)
	if err != nil || c == nil {
		return 0, nil
	}
	obj, exists, err := c.launcher.GetIndexer().GetByKey(k)
	if err != nil || !exists {
		return 0, err
	}
	pod := obj.(*corev1.Pod)
	if isAttachmentPod(pod) {
		return s.syncAttachment(ctx, pod) // hotplug.go
	}
	switch {
	case pod.DeletionTimestamp != nil:
		vmi, err := s.launcherVMI(ctx, c, pod)
		if err != nil {
			return 0, err
		}
		teardown := s.teardownWait(pod, vmi)
		if wait := s.holdLauncher(vmi); wait > 0 {
			return wait, nil
		}
		if teardown > 0 {
			return teardown, nil
		}
		return 0, s.confirmDeletion(ctx, pod)
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return 0, nil
	case pod.Spec.NodeName == "":
		return 0, s.bindPod(ctx, pod)
	}
	vmi, err := s.launcherVMI(ctx, c, pod)
	if err != nil {
		return 0, err
	}
	if vmi == nil || kubevirt.Final(vmi) {
		phase := corev1.PodSucceeded
		if kubevirt.PhaseOf(vmi) == kubevirt.PhaseFailed {
			phase = corev1.PodFailed
		}
		return 0, s.updatePodStatus(ctx, pod, func(st *corev1.PodStatus) {
			st.Phase = phase
			st.Conditions = podConditions(corev1.ConditionFalse)
			st.ContainerStatuses = containerStatuses(pod, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", FinishedAt: metav1.Now(),
			}})
		})
	}
	if pod.Status.Phase == corev1.PodRunning {
		return 0, nil
	}
	return 0, s.runPod(ctx, pod)
}

// holdLauncher is how long the deleted launcher pod of vmi stays: the
// kubelet sends virt-launcher SIGTERM, and virt-launcher shuts the domain
// down within the VMI's grace period (stopWait) before it exits, whoever
// deleted the pod and whatever the simulator's cache says of the VMI. (It
// used to wait only for a VMI its cache showed deleted: virt-controller
// deletes the pod as soon as it sees the VMI deleted, so on a loaded
// machine the simulator's VMI informer, a moment behind its pod informer,
// still showed the VMI undeleted, the pod was confirmed at once,
// virt-controller failed the Running VMI without a pod and a guest with an
// hour's grace was gone within a second.) A VMI gone or final has no
// guest left to wait for.
func (s *Simulator) holdLauncher(vmi *unstructured.Unstructured) time.Duration {
	if vmi == nil || kubevirt.Final(vmi) || s.stopDelay(vmi) <= 0 {
		return 0
	}
	s.mu.Lock()
	if !s.launcherHeld[vmi.GetUID()] {
		s.launcherHeld[vmi.GetUID()] = true
		s.launchersHeld.Add(1)
	}
	s.mu.Unlock()
	return s.stopWait(vmi)
}

// LauncherHeld reports whether the simulator has held the deleted
// virt-launcher pod of the VMI with uid for its guest's stop: the kubelet
// and virt-launcher's part of a graceful stop has begun, and the guest
// runs until its VMI's grace period (or [Options.StopDelay]) has passed
// from the first time the simulator saw the stop. It stays true until the
// VMI is gone. Tests wait on it to know a graceful stop is in progress
// instead of watching a guest for a while.
func (s *Simulator) LauncherHeld(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.launcherHeld[uid]
}

// launcherVMI is the VMI a launcher pod runs (its controller owner), read
// live when the cache does not have it yet; nil if it is gone.
func (s *Simulator) launcherVMI(ctx context.Context, c *nsCaches, pod *corev1.Pod) (*unstructured.Unstructured, error) {
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "VirtualMachineInstance" {
		return nil, nil
	}
	if vmi := s.getU(pod.Namespace+"/"+owner.Name, vmiInformer); vmi != nil && vmi.GetUID() == owner.UID {
		return vmi, nil
	}
	vmi, err := s.dyn.Resource(VMIResource).Namespace(pod.Namespace).Get(ctx, owner.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("VMI of launcher pod %s/%s: %w", pod.Namespace, pod.Name, err)
	case vmi.GetUID() != owner.UID:
		return nil, nil
	}
	return vmi, nil
}

// enqueueLaunchers requeues the launcher pods of a namespace (a VMI there
// changed).
func (s *Simulator) enqueueLaunchers(ns string) {
	c := s.cachesFor(ns)
	if c == nil {
		return
	}
	pods, _ := c.launcher.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	for _, o := range pods {
		s.queues.launcher.Add(key(o))
	}
}

func podConditions(status corev1.ConditionStatus) []corev1.PodCondition {
	now := metav1.Now()
	out := []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		out = append(out, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: now})
	}
	return out
}

// bindPod binds a pod to NodeName, as the scheduler would.
func (s *Simulator) bindPod(ctx context.Context, pod *corev1.Pod) error {
	err := s.kube.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: NodeName},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("bind pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// confirmDeletion is the kubelet killing a deleted pod's containers and
// confirming the deletion (grace period 0).
func (s *Simulator) confirmDeletion(ctx context.Context, pod *corev1.Pod) error {
	err := s.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64(0)),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// runPod writes pod's status as kubelet does once its containers run.
func (s *Simulator) runPod(ctx context.Context, pod *corev1.Pod) error {
	return s.updatePodStatus(ctx, pod, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodRunning
		st.HostIP, st.PodIP = "127.0.0.1", "127.0.0.1"
		st.StartTime = new(metav1.Now())
		st.QOSClass = corev1.PodQOSBurstable
		st.Conditions = podConditions(corev1.ConditionTrue)
		st.ContainerStatuses = containerStatuses(pod, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}})
	})
}
