package sim

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// KubeletTeardown is how long after it first sees the deletion of a
// launcher pod whose VMI had already ended (a guest shutdown, a reboot
// under rebootPolicy Terminate, a failure) the simulator's kubelet
// confirms it. A kubelet never confirms at once: it reclaims the pod's
// volumes and cgroups first. (A pod deleted under a running VMI waits for
// its guest's stop instead: holdLauncher.)
//
// Confirming at once tripped a race in KubeVirt v1.9's VMI controller
// (pkg/virt-controller/watch/vmi, read in its source and seen at log
// verbosity 4). A sync of a deleted VMI deletes its launcher pod, and
// again at every sync once the pod has ended (deleteAllMatchingPods skips
// a deleting pod only while it runs), each time expecting a deletion
// (podExpectations, keyed by the VMI's namespace/name). When the pod left
// the controller's cache between that delete and the same sync's
// updateStatus, the sync of an ended VMI found all pods gone and removed
// its finalizer with the expectation still open; the pod's deletion event
// then resolved its owner by name to the VM's next VMI (another UID) and
// was dropped, and the controller skipped that next VMI until the
// expectation's 5-minute TTL (and nothing enqueued it then): no phase, no
// launcher pod, a restart that never came. The simulator's confirmation,
// triggered by the same pod update as that sync, landed in that window on
// a loaded machine (power.TestGuestReboot, in CI). With the teardown the
// confirmation lands after the sync. This narrows KubeVirt's window to a
// sync stalled for the whole teardown; it cannot close it, and real
// clusters can meet the same race.
const KubeletTeardown = time.Second

// teardown is a deleted launcher pod as the simulator first saw it.
type teardown struct {
	seen time.Time
	wait bool // its VMI (or the pod) had ended then
}

// teardownWait is how long the deleted launcher pod of vmi (nil: gone)
// still waits for its kubelet teardown: KubeletTeardown from the first time
// its deletion was seen, when its VMI or the pod had ended by then; 0
// otherwise.
func (s *Simulator) teardownWait(pod *corev1.Pod, vmi *unstructured.Unstructured) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.teardowns[pod.UID]
	if !ok {
		ended := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
		t = teardown{seen: time.Now(), wait: ended || vmi == nil || kubevirt.Final(vmi)}
		s.teardowns[pod.UID] = t
	}
	if !t.wait {
		return 0
	}
	return KubeletTeardown - time.Since(t.seen)
}

// forgetLauncher drops what the simulator remembers about a deleted
// launcher pod.
func (s *Simulator) forgetLauncher(obj any) {
	if pod := asPod(obj); pod != nil {
		s.mu.Lock()
		delete(s.teardowns, pod.UID)
		s.mu.Unlock()
	}
}
