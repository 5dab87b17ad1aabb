package importer

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

func TestPodFor(t *testing.T) {
	o := Owner{Key: system.Key{Namespace: "ns", Name: "vm1"}, UID: "uid-1"}
	url := "http://host/x.iso?a=$(reboot)&b=`id`;rm -rf /"
	slot := system.MediaSlot{Slot: "cd0", Image: url, InsertID: "0123456789abcdef", ClaimName: "vm1-media-cd0"}
	pod := PodFor(o, slot, "img:1", download.ImportRequest{
		URL: url, Dest: ImageDest, Timeout: time.Minute,
		MaxBytes: 64 << 30, ClaimSize: resource.MustParse("8Gi"),
	})

	c := pod.Spec.Containers[0]
	got := append(append([]string{}, c.Command...), c.Args...)
	want := []string{"redfish-bridge", "import", "--url=" + url, "--dest=/image/disk.img", "--timeout=1m0s",
		"--max-size=64Gi", "--claim-size=8Gi"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("argv (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{
		LabelComponent: ComponentImporter, LabelPartOf: PartOf, LabelSlot: "cd0", LabelInsertID: slot.InsertID,
	}, pod.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	checks := map[string]bool{
		"name":                    pod.Name == "vm1-media-cd0-0123456789abcdef",
		"container name":          c.Name == "importer",
		"restart never":           pod.Spec.RestartPolicy == corev1.RestartPolicyNever,
		"non-root":                *pod.Spec.SecurityContext.RunAsNonRoot && *pod.Spec.SecurityContext.RunAsUser != 0,
		"no privilege escalation": !*c.SecurityContext.AllowPrivilegeEscalation,
		"claim":                   pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName == "vm1-media-cd0",
		"mount":                   c.VolumeMounts[0].MountPath == "/image",
		"Owner not controller":    !*pod.OwnerReferences[0].Controller && !*pod.OwnerReferences[0].BlockOwnerDeletion,
		"Owner VM":                pod.OwnerReferences[0].Kind == "VirtualMachine" && pod.OwnerReferences[0].UID == "uid-1",
	}
	for what, ok := range checks {
		if !ok {
			t.Errorf("pod: %s wrong", what)
		}
	}
	if !o.Owns(pod) {
		t.Errorf("the VM does not own its own import pod")
	}
}

func TestTerminationMessage(t *testing.T) {
	term := func(msg, reason string, code int32) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name:  ImporterContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: msg, Reason: reason, ExitCode: code}},
		}}}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"message", term("GET x: HTTP 404 Not Found", "Error", 1), "GET x: HTTP 404 Not Found"},
		{"reason", term("", "OOMKilled", 137), "OOMKilled (exit code 137)"},
		{"pod message", &corev1.Pod{Status: corev1.PodStatus{Message: "evicted", Reason: "Evicted"}}, "evicted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TerminationMessage(tt.pod); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
