package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/media"
)

// TestCachePrune runs `redfish-bridge cache prune` as the bridge (the
// chart's RBAC) on a real apiserver: the image cache entries of the
// namespaces given go, except the one an import pod that has not ended
// mounts, which goes with --include-in-use (the uninstall hook's flag);
// entries of other namespaces, a finished import's entry, PVCs that are
// not entries (a slot's PVC, a PVC merely named like an entry, one with
// the labels but no key) and the dry run are checked on the way.
func TestCachePrune(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	c := testcluster.ForTest(t, crds.Stock)
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(c.Admin)
	for _, ns := range []string{"vms-a", "vms-b", "other"} {
		if err := c.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	entry := map[string]string{media.LabelComponent: media.ComponentImageCache, media.LabelPartOf: media.PartOf}
	pvc := func(ns, name string, labels, annotations map[string]string) {
		t.Helper()
		p := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if _, err := admin.CoreV1().PersistentVolumeClaims(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cacheEntry := func(ns, key string) string {
		pvc(ns, media.CacheClaimName(key), entry, map[string]string{media.AnnotationCacheKey: key})
		return ns + "/" + media.CacheClaimName(key)
	}
	importPod := func(ns, name, claim string, phase corev1.PodPhase) {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{media.LabelComponent: media.ComponentImporter, media.LabelPartOf: media.PartOf}},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "import", Image: "redfish-bridge:test"}},
				Volumes: []corev1.Volume{{Name: "image-cache", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
				}}},
			},
		}
		created, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if phase != "" {
			created.Status.Phase = phase
			if _, err := admin.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	idleA := cacheEntry("vms-a", strings.Repeat("a", 32))
	busyA := cacheEntry("vms-a", strings.Repeat("b", 32))
	doneA := cacheEntry("vms-a", strings.Repeat("c", 32))
	idleB := cacheEntry("vms-b", strings.Repeat("d", 32))
	otherNS := cacheEntry("other", strings.Repeat("e", 32))
	importPod("vms-a", "import-busy", media.CacheClaimName(strings.Repeat("b", 32)), "")
	importPod("vms-a", "import-done", media.CacheClaimName(strings.Repeat("c", 32)), corev1.PodSucceeded)
	pvc("vms-a", "redfish-cd0-vm", map[string]string{media.LabelComponent: media.ComponentMedia, media.LabelPartOf: media.PartOf}, nil)
	pvc("vms-a", media.CacheClaimName(strings.Repeat("f", 32)), nil, nil)
	pvc("vms-a", "labelled-no-key", entry, nil)
	notEntries := []string{"vms-a/redfish-cd0-vm", "vms-a/" + media.CacheClaimName(strings.Repeat("f", 32)), "vms-a/labelled-no-key"}

	// going lists the PVCs among all that are gone or being deleted.
	all := append([]string{idleA, busyA, doneA, idleB, otherNS}, notEntries...)
	going := func() []string {
		t.Helper()
		var out []string
		for _, name := range all {
			ns, n, _ := strings.Cut(name, "/")
			p, err := admin.CoreV1().PersistentVolumeClaims(ns).Get(ctx, n, metav1.GetOptions{})
			switch {
			case err != nil && !strings.Contains(err.Error(), "not found"):
				t.Fatal(err)
			case err != nil, p.DeletionTimestamp != nil:
				out = append(out, name)
			}
		}
		return out
	}
	prune := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, false, nil, append([]string{"cache", "prune", "--kubeconfig", c.BridgeKubeconfig, "--namespaces", "vms-a,vms-b"}, args...)...)
		if code != 0 {
			t.Fatalf("cache prune %q: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	for _, step := range []struct {
		name     string
		args     []string
		going    []string // after the step
		summary  string
		inOutput []string
	}{
		{"dry run deletes nothing", []string{"--dry-run"}, nil, "image cache: 3 entries to delete, 1 in use kept", []string{busyA + "  1Gi  kept (in use)", idleA + "  1Gi  would delete"}},
		{"idle entries of the namespaces go", nil, []string{idleA, doneA, idleB}, "image cache: 3 entries deleted, 1 in use kept", []string{busyA + "  1Gi  kept (in use)"}},
		{"include-in-use: the entry an import reads goes too", []string{"--include-in-use"}, []string{idleA, busyA, doneA, idleB}, "image cache: 1 entries deleted, 0 in use kept", []string{busyA + "  1Gi  deleted (in use: goes when its import pod ends)"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			out := prune(step.args...)
			if diff := cmp.Diff(step.going, going()); diff != "" {
				t.Errorf("PVCs gone or being deleted (-want +got):\n%s\noutput:\n%s", diff, out)
			}
			for _, want := range append(step.inOutput, step.summary+"\n") {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
