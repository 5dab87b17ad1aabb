package podimport

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/media/importer"
)

// TestPodStatus reads an import pod as an import state: running, the
// image's size from a succeeded pod's result, a larger PVC asked for, a
// failed pod's termination message as the reason.
func TestPodStatus(t *testing.T) {
	created := metav1.NewTime(time.Unix(1000, 0))
	pod := func(phase corev1.PodPhase, msg string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created}, Status: corev1.PodStatus{Phase: phase}}
		if msg != "" {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name: importer.ImporterContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: msg}},
			}}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want importer.Status
	}{
		{"running", pod(corev1.PodRunning, ""), importer.Status{State: importer.Running, Started: created.Time}},
		{"succeeded", pod(corev1.PodSucceeded, `{"bytes":42}`), importer.Status{State: importer.Succeeded, Bytes: 42, Started: created.Time}},
		{"needs room", pod(corev1.PodFailed, `{"needBytes":9000000000}`), importer.Status{State: importer.NeedsRoom, Bytes: 9000000000, Reason: `{"needBytes":9000000000}`, Started: created.Time}},
		{"failed", pod(corev1.PodFailed, "HTTP 404"), importer.Status{State: importer.Failed, Reason: "HTTP 404", Started: created.Time}},
		{"failed silently", pod(corev1.PodFailed, ""), importer.Status{State: importer.Failed, Reason: "import pod failed", Started: created.Time}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, podStatus(tc.pod)); diff != "" {
				t.Errorf("podStatus (-want +got):\n%s", diff)
			}
		})
	}
}
