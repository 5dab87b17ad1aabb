package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// The node side of KubeVirt v1.9's volume hotplug. virt-controller adds a
// hotpluggable volume of the VM's template to the running VMI (declarative
// hotplug), creates an attachment pod (label kubevirt.io=hotplug-disk,
// owned by the virt-launcher pod, pinned to its node) mounting the
// volume's PVC, and records each hotplug volume in the VMI's
// status.volumeStatus: Bound/Pending, then AttachedToNode once the pod
// exists, with hotplugVolume.attachPodUID once its container is ready.
// The simulator plays:
//
//   - the scheduler and kubelet for attachment pods: bound to NodeName,
//     Running with the container ready, a deletion confirmed at once
//     (their grace period is 0);
//   - virt-handler's part: a volume in the VMI's spec that is
//     AttachedToNode with its attachment pod ready is mounted into the
//     launcher pod and attached to the domain (phase Ready, reason
//     VolumeReady); a volume gone from the spec (unplugged) that is still
//     Ready or MountedToPod is detached from the domain and unmounted
//     (phase UnMountedFromPod), after which virt-controller deletes the
//     attachment pod and drops the status entry.

// attachmentPodApp is the kubevirt.io label value of attachment pods.
const attachmentPodApp = "hotplug-disk"

// podsSelector selects the pods the launcher informer watches: virt-launcher
// and attachment pods.
var podsSelector = fmt.Sprintf("%s in (virt-launcher,%s)", kubevirtv1.AppLabel, attachmentPodApp)

// Volume hotplug phases and reasons as virt-handler v1.9.0 writes them.
const (
	phaseAttachedToNode = string(kubevirtv1.HotplugVolumeAttachedToNode)
	phaseMounted        = string(kubevirtv1.HotplugVolumeMounted)
	phaseReady          = string(kubevirtv1.VolumeReady)
	phaseUnMounted      = string(kubevirtv1.HotplugVolumeUnMounted)
	reasonVolumeReady   = "VolumeReady"
	reasonUnMounted     = "VolumeUnMountedFromPod"
)

// isAttachmentPod reports whether pod is a hotplug attachment pod.
func isAttachmentPod(pod *corev1.Pod) bool {
	return pod.Labels[kubevirtv1.AppLabel] == attachmentPodApp
}

// syncAttachment plays the scheduler and the kubelet for an attachment pod.
func (s *Simulator) syncAttachment(ctx context.Context, pod *corev1.Pod) (time.Duration, error) {
	switch {
	case pod.DeletionTimestamp != nil:
		return 0, s.confirmDeletion(ctx, pod)
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return 0, nil
	case pod.Spec.NodeName == "":
		return 0, s.bindPod(ctx, pod)
	case pod.Status.Phase == corev1.PodRunning:
		return 0, nil
	}
	return 0, s.runPod(ctx, pod)
}

// syncHotplug plays virt-handler's hotplug for a running VMI: attached
// volumes become Ready, unplugged ones UnMountedFromPod (see above). The
// write is guarded by the resourceVersion read, like every VMI status
// write of the simulator.
func (s *Simulator) syncHotplug(ctx context.Context, vmi *unstructured.Unstructured) error {
	statuses, _, _ := unstructured.NestedSlice(vmi.Object, "status", "volumeStatus")
	inSpec := map[string]bool{}
	for name := range names(vmi.Object, "spec", "volumes") {
		inSpec[name] = true
	}
	changed := false
	for _, e := range statuses {
		st, ok := e.(map[string]any)
		hp, hot := st["hotplugVolume"].(map[string]any)
		if !ok || !hot {
			continue
		}
		name, _ := st["name"].(string)
		phase, _ := st["phase"].(string)
		podUID, _ := hp["attachPodUID"].(string)
		switch {
		case inSpec[name] && phase == phaseAttachedToNode && podUID != "":
			st["phase"], st["reason"] = phaseReady, reasonVolumeReady
			st["message"] = fmt.Sprintf("Successfully attach hotplugged volume %s to VM", name)
			changed = true
		case !inSpec[name] && (phase == phaseReady || phase == phaseMounted):
			st["phase"], st["reason"] = phaseUnMounted, reasonUnMounted
			st["message"] = fmt.Sprintf("Volume %s has been unmounted from virt-launcher pod", name)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	body := map[string]any{
		"metadata": map[string]any{"resourceVersion": vmi.GetResourceVersion()},
		"status":   map[string]any{"volumeStatus": statuses},
	}
	if err := s.patchVMI(ctx, vmi.GetNamespace(), vmi.GetName(), body); err != nil {
		return fmt.Errorf("hotplug status of VMI %s/%s: %w", vmi.GetNamespace(), vmi.GetName(), err)
	}
	s.hotplugs.Add(1)
	return nil
}
