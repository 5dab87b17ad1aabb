package sim_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
)

func TestKubelet(t *testing.T) {
	image := make([]byte, 3<<20+17)
	if _, err := rand.Read(image); err != nil {
		t.Fatal(err)
	}
	var aborted atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/image.iso":
			_, _ = w.Write(image)
		case "/slow.iso":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // never finishes; the client aborts
			aborted.Add(1)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(image)
	k := &kubeletTest{env: start(t, crds.Stock, sim.Options{StartDelay: 20 * time.Millisecond, StopDelay: 20 * time.Millisecond}),
		url: srv.URL, sha256: hex.EncodeToString(sum[:]), aborted: &aborted}

	t.Run("PVC binding", k.testPVCBinding)
	t.Run("import", k.testImport)
	t.Run("404", k.testNotFound)
	t.Run("multi-attach", k.testMultiAttach)
	t.Run("deleted mid-download", k.testDeletedMidDownload)
	t.Run("other pods left alone", k.testOtherPods)
	t.Run("mounted Secret", k.testMountedSecret)
}

type kubeletTest struct {
	*env
	url, sha256 string
	aborted     *atomic.Int64
}

func (k *kubeletTest) createPVC(t *testing.T, name string, modes ...corev1.PersistentVolumeAccessMode) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: modes,
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := k.kube.CoreV1().PersistentVolumeClaims(k.ns).Create(t.Context(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createImportPod creates a pod following the media/ import pod contract.
func (k *kubeletTest) createImportPod(t *testing.T, name, claim, url string, labels map[string]string) {
	t.Helper()
	if labels == nil {
		labels = map[string]string{"app.kubernetes.io/component": "importer", "app.kubernetes.io/part-of": "redfish-bridge"}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "importer", Image: "registry.example/importer:v1",
				Args:         []string{"--url=" + url, "--dest=/data/disk.img"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}}},
		},
	}
	if _, err := k.kube.CoreV1().Pods(k.ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podDone waits for the pod to end and returns its phase, exit code and
// termination message.
type podEnd struct {
	Phase    corev1.PodPhase
	ExitCode int32
	Message  string
}

func (k *kubeletTest) podEnds(t *testing.T, name string) podEnd {
	t.Helper()
	var end podEnd
	eventually(t, "pod "+name+" ends", func(ctx context.Context) error {
		pod, err := k.kube.CoreV1().Pods(k.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return fmt.Errorf("phase %s", pod.Status.Phase)
		}
		end = podEnd{Phase: pod.Status.Phase}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == "importer" && cs.State.Terminated != nil {
				end.ExitCode, end.Message = cs.State.Terminated.ExitCode, cs.State.Terminated.Message
			}
		}
		return nil
	})
	return end
}

func (k *kubeletTest) testPVCBinding(t *testing.T) {
	k.createPVC(t, "bind-me", corev1.ReadWriteOnce)
	eventually(t, "PVC bound", func(ctx context.Context) error {
		pvc, err := k.kube.CoreV1().PersistentVolumeClaims(k.ns).Get(ctx, "bind-me", metav1.GetOptions{})
		if err != nil {
			return err
		}
		got := pvc.Status.DeepCopy()
		got.Conditions = nil
		want := &corev1.PersistentVolumeClaimStatus{
			Phase:       corev1.ClaimBound,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("PVC status (-want +got):\n%s", diff)
		}
		return nil
	})
}

func (k *kubeletTest) testImport(t *testing.T) {
	k.createPVC(t, "iso-ok", corev1.ReadWriteOnce)
	before := k.sim.Counters()
	k.createImportPod(t, "import-ok", "iso-ok", k.url+"/image.iso", nil)
	end := k.podEnds(t, "import-ok")
	if end.Phase != corev1.PodSucceeded || end.ExitCode != 0 || !strings.Contains(end.Message, k.sha256) {
		t.Errorf("pod ended %+v, want Succeeded, exit 0, message with sha256 %s", end, k.sha256)
	}
	data, err := os.ReadFile(k.sim.ImagePath(k.ns, "iso-ok"))
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.Sum256(data)
	if hex.EncodeToString(got[:]) != k.sha256 {
		t.Errorf("imported file: %d bytes, sha256 %x; want sha256 %s", len(data), got, k.sha256)
	}
	after := k.sim.Counters()
	if diff := cmp.Diff([2]int64{1, 1}, [2]int64{after.ImportsStarted - before.ImportsStarted, after.ImportsSucceeded - before.ImportsSucceeded}); diff != "" {
		t.Errorf("imports started, succeeded (-want +got):\n%s", diff)
	}
}

func (k *kubeletTest) testNotFound(t *testing.T) {
	k.createPVC(t, "iso-404", corev1.ReadWriteOnce)
	before := k.sim.Counters().ImportsFailed
	k.createImportPod(t, "import-404", "iso-404", k.url+"/missing.iso", nil)
	end := k.podEnds(t, "import-404")
	if end.Phase != corev1.PodFailed || end.ExitCode != 1 || !strings.Contains(end.Message, "404 Not Found") {
		t.Errorf("pod ended %+v, want Failed, exit 1, message with 404 Not Found", end)
	}
	if _, err := os.Stat(k.sim.ImagePath(k.ns, "iso-404")); !os.IsNotExist(err) {
		t.Errorf("image file after a failed import: %v, want none", err)
	}
	if n := k.sim.Counters().ImportsFailed - before; n != 1 {
		t.Errorf("%d failed imports counted, want 1", n)
	}
}

// testMultiAttach: a running VM holds the RWO claim, so the import waits
// until the VM stops.
func (k *kubeletTest) testMultiAttach(t *testing.T) {
	k.createPVC(t, "iso-held", corev1.ReadWriteOnce)
	vm := newVM(k.ns, "holder", "Always")
	spec := vm.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	devices := spec["domain"].(map[string]any)["devices"].(map[string]any)
	devices["disks"] = append(devices["disks"].([]any), map[string]any{"name": "cdrom0", "cdrom": map[string]any{"bus": "sata"}})
	spec["volumes"] = append(spec["volumes"].([]any), map[string]any{"name": "cdrom0", "persistentVolumeClaim": map[string]any{"claimName": "iso-held"}})
	k.createVM(t, vm)
	k.vmiIs(t, "holder", "Running", "")
	before := k.sim.Counters().MultiAttachRefusals

	// The pod's history, watched from before its creation: it must stay
	// Pending until the VM is halted, by etcd's order of the writes, not
	// for a window of time.
	w, err := k.kube.CoreV1().Pods(k.ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=import-held"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	k.createImportPod(t, "import-held", "iso-held", k.url+"/image.iso", nil)
	eventually(t, "Multi-Attach event", func(ctx context.Context) error {
		evs, err := k.kube.CoreV1().Events(k.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=import-held"})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.Reason == sim.ReasonMultiAttach && strings.Contains(ev.Message, "Multi-Attach error") && strings.Contains(ev.Message, "virt-launcher-holder") {
				return nil
			}
		}
		return fmt.Errorf("%d events, none FailedAttachVolume naming virt-launcher-holder", len(evs.Items))
	})
	if got := k.sim.Counters().MultiAttachRefusals - before; got != 1 {
		t.Errorf("Multi-Attach refusals counted: %d, want 1", got)
	}
	// A change of the pod makes the simulator look at it again, the claim
	// still held: once its sync of that change has finished, a start
	// would have been written (and the watch would show it before the halt).
	touched, err := k.kube.CoreV1().Pods(k.ns).Patch(t.Context(), "import-held", types.MergePatchType, []byte(`{"metadata":{"annotations":{"test/touched":"1"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the simulator synced the touched pod", func(context.Context) error {
		if got := k.sim.PodSynced(k.ns + "/import-held"); got == "" || rv(t, got) < rv(t, touched.ResourceVersion) {
			return fmt.Errorf("last synced at resourceVersion %q, touched at %s", got, touched.ResourceVersion)
		}
		return nil
	})

	halted := k.patchVM(t, "holder", `{"spec":{"runStrategy":"Halted"}}`)
	if end := k.podEnds(t, "import-held"); end.Phase != corev1.PodSucceeded {
		t.Errorf("pod ended %+v after the VM stopped, want Succeeded", end)
	}
	left := firstNotPending(t, w)
	if rv(t, left.ResourceVersion) < rv(t, halted.GetResourceVersion()) {
		t.Errorf("the pod left Pending (%s at resourceVersion %s) before the VM holding its claim was halted (%s)", left.Status.Phase, left.ResourceVersion, halted.GetResourceVersion())
	}
}

// firstNotPending is the first pod w shows in another phase than Pending.
func firstNotPending(t *testing.T, w watch.Interface) *corev1.Pod {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the pod watch ended before the pod left Pending")
			}
			if pod, isPod := ev.Object.(*corev1.Pod); isPod && pod.Status.Phase != corev1.PodPending {
				return pod
			}
		case <-deadline:
			t.Fatal("the pod watch showed no phase but Pending")
		}
	}
}

func rv(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}

func (k *kubeletTest) testDeletedMidDownload(t *testing.T) {
	k.createPVC(t, "iso-slow", corev1.ReadWriteOnce)
	before := k.aborted.Load()
	k.createImportPod(t, "import-slow", "iso-slow", k.url+"/slow.iso", nil)
	eventually(t, "pod Running", func(ctx context.Context) error {
		pod, err := k.kube.CoreV1().Pods(k.ns).Get(ctx, "import-slow", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", pod.Status.Phase)
		}
		return nil
	})
	if err := k.kube.CoreV1().Pods(k.ns).Delete(t.Context(), "import-slow", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod gone and download aborted", func(ctx context.Context) error {
		_, err := k.kube.CoreV1().Pods(k.ns).Get(ctx, "import-slow", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("pod still there (err %w)", err)
		}
		if k.aborted.Load() == before {
			return fmt.Errorf("the server saw no aborted request")
		}
		return nil
	})
}

func (k *kubeletTest) testOtherPods(t *testing.T) {
	k.createPVC(t, "iso-other", corev1.ReadWriteOnce)
	k.createImportPod(t, "not-ours", "iso-other", k.url+"/image.iso", map[string]string{"app.kubernetes.io/component": "importer"})
	// A later pod of ours, run to its end: the simulator saw its creation
	// after the foreign pod's (one watch of the namespace, in order) and
	// synced it many times since, so it would have acted on the foreign one.
	k.createPVC(t, "iso-after", corev1.ReadWriteOnce)
	k.createImportPod(t, "ours-after", "iso-after", k.url+"/image.iso", nil)
	if end := k.podEnds(t, "ours-after"); end.Phase != corev1.PodSucceeded {
		t.Fatalf("our pod after the foreign one ended %+v, want Succeeded", end)
	}
	pod, err := k.kube.CoreV1().Pods(k.ns).Get(t.Context(), "not-ours", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
		t.Errorf("pod touched: node %q, phase %s", pod.Spec.NodeName, pod.Status.Phase)
	}
}
