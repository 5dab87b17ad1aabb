package media_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// importPod waits for the import pod of insertID and returns it.
func (e *env) importPod(t *testing.T, key system.Key, insertID string, cond func(*corev1.Pod) bool) corev1.Pod {
	t.Helper()
	var found corev1.Pod
	e.eventually(t, "import pod of insert "+insertID, func(ctx context.Context) error {
		pods, err := e.pods(ctx, key, slot)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Labels[media.LabelInsertID] == insertID && cond(&p) {
				found = p
				return nil
			}
		}
		return fmt.Errorf("pods: %v", podSummary(pods))
	})
	return found
}

func podPhase(ph corev1.PodPhase) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { return p.Status.Phase == ph }
}

// testRestart: work accepted survives a restart of the bridge.
func testRestart(t *testing.T, e *env) {
	t.Run("finished while down", func(t *testing.T) {
		key := e.createVM(t, vmName(t)+"-fin")
		url, sum := e.img.add("/restart-fin.iso", 1<<20, true)
		// Accepted with no reconciler running at all.
		ins, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
		if err != nil {
			t.Fatal(err)
		}
		_, stopA := e.startReconciler(t, nil)
		e.waitSlot(t, key, slot, "Importing", phaseIs(system.MediaImporting))
		e.importPod(t, key, ins.InsertID, podPhase(corev1.PodRunning))
		stopA()

		e.img.open("/restart-fin.iso")
		e.importPod(t, key, ins.InsertID, podPhase(corev1.PodSucceeded))
		if s := e.waitSlot(t, key, slot, "still Importing", func(system.MediaSlot) bool { return true }); s.Phase != system.MediaImporting {
			t.Fatalf("with no reconciler the slot moved to %s", s.Phase)
		}

		rB, stopB := e.startReconciler(t, nil)
		defer stopB()
		ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
		if ready.InsertID != ins.InsertID {
			t.Errorf("InsertID %s, want %s", ready.InsertID, ins.InsertID)
		}
		checkImage(t, e, ready.ClaimName, sum)
		e.noImportPods(t, key)
		if st := rB.Stats(); st.PodsCreated != 0 {
			t.Errorf("the restarted reconciler created %d pods, want 0 (it must find the finished one)", st.PodsCreated)
		}
	})
	t.Run("pod lost while down", func(t *testing.T) {
		key := e.createVM(t, vmName(t)+"-lost")
		url, sum := e.img.add("/restart-lost.iso", 1<<20, true)
		ins, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
		if err != nil {
			t.Fatal(err)
		}
		_, stopA := e.startReconciler(t, nil)
		e.waitSlot(t, key, slot, "Importing", phaseIs(system.MediaImporting))
		lost := e.importPod(t, key, ins.InsertID, podPhase(corev1.PodRunning))
		stopA()
		if err := e.adminKube.CoreV1().Pods(e.ns).Delete(t.Context(), lost.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.noImportPods(t, key)

		_, stopB := e.startReconciler(t, nil)
		defer stopB()
		again := e.importPod(t, key, ins.InsertID, func(p *corev1.Pod) bool { return p.UID != lost.UID })
		if again.Name != lost.Name {
			t.Errorf("re-created pod %s, want the deterministic name %s", again.Name, lost.Name)
		}
		e.img.open("/restart-lost.iso")
		ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
		checkImage(t, e, ready.ClaimName, sum)
	})
}

// testStaleImport: a pod of an older insert that finishes never changes the
// current slot; it is deleted, and the current insert imports.
func testStaleImport(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	urlA, _ := e.img.add("/stale-a.iso", 1<<20, true)
	urlB, sumB := e.img.add("/stale-b.iso", 2<<20, true)
	a, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: urlA})
	if err != nil {
		t.Fatal(err)
	}
	_, stopA := e.startReconciler(t, nil)
	podA := e.importPod(t, key, a.InsertID, podPhase(corev1.PodRunning))
	stopA()

	// Another replica abandoned insert A and accepted insert B.
	if _, err := e.w.Media(t.Context(), key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		s := slots[slot]
		s.Phase, s.Reason = system.MediaFailed, "test: abandoned"
		slots[slot] = s
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, "cache sees the abandoned insert", func(context.Context) error {
		vm, err := e.w.Read(t.Context(), key)
		if err != nil {
			return err
		}
		if vm.Slots[slot].Phase != system.MediaFailed {
			return fmt.Errorf("slot %+v", vm.Slots[slot])
		}
		return nil
	})
	b, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: urlB})
	if err != nil {
		t.Fatal(err)
	}
	// Pod A finishes with the bridge down.
	e.img.open("/stale-a.iso")
	e.importPod(t, key, a.InsertID, podPhase(corev1.PodSucceeded))

	var ps *passes
	r, stop := e.startReconciler(t, withPasses(&ps))
	defer stop()
	e.eventually(t, "stale pod A deleted", func(ctx context.Context) error {
		_, err := e.adminKube.CoreV1().Pods(e.ns).Get(ctx, podA.Name, metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("pod %s still there", podA.Name)
		}
		return nil
	})
	// Pod B exists, so a pass saw pod A gone; the barrier waits until every
	// pass that could still act on what the caches held of pod A has ended.
	// B's image is not served yet: nothing of B can have moved the slot.
	e.importPod(t, key, b.InsertID, podPhase(corev1.PodRunning))
	ps.barrier(t, e, key)
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if s := vm.Slots[slot]; s.InsertID != b.InsertID || s.Image != urlB || s.Phase != system.MediaImporting || s.Percent != 0 {
		t.Fatalf("the stale pod changed the slot: %+v", s)
	}
	e.img.open("/stale-b.iso")
	ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	if ready.InsertID != b.InsertID || ready.Image != urlB {
		t.Errorf("Ready slot %+v, want insert %s of %s", ready, b.InsertID, urlB)
	}
	checkImage(t, e, ready.ClaimName, sumB)
	if st := r.Stats(); st.StalePodsDeleted < 1 {
		t.Errorf("StalePodsDeleted = %d", st.StalePodsDeleted)
	}
}

func testTimeout(t *testing.T, e *env) {
	var mu sync.Mutex
	var observed []string
	r, stop := e.startReconciler(t, func(o *media.Options) {
		o.ImportTimeout = 3 * time.Second
		o.ObserveImport = func(result string, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			observed = append(observed, fmt.Sprintf("%s>=2s:%v", result, d >= 2*time.Second))
		}
	})
	defer stop()
	key := e.createVM(t, vmName(t))
	url, _ := e.img.add("/timeout.iso", 1<<20, true) // never opened
	ins, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatal(err)
	}
	e.importPod(t, key, ins.InsertID, podPhase(corev1.PodRunning))
	failed := e.waitSlot(t, key, slot, "Failed", phaseIs(system.MediaFailed))
	if failed.Reason != "import timed out" || failed.InsertID != ins.InsertID {
		t.Errorf("slot %+v, want Failed import timed out", failed)
	}
	e.noImportPods(t, key)
	mu.Lock()
	if !slices.Contains(observed, "timed_out>=2s:true") {
		t.Errorf("ObserveImport saw %v, want a timed_out of about 3s", observed)
	}
	mu.Unlock()
	if st := r.Stats(); st.ImportsTimedOut < 1 {
		t.Errorf("ImportsTimedOut = %d, want >= 1", st.ImportsTimedOut)
	}
}

// testHealVolumeWithoutDisk breaks the VM the way production did (the
// CD-ROM disk entry lost, its volume kept) and expects the media intent to
// be re-applied; a disk without its volume is reported.
func testHealVolumeWithoutDisk(t *testing.T, e *env) {
	r, stop := e.startReconciler(t, nil)
	defer stop()
	key := e.createVM(t, vmName(t))
	url, _ := e.img.add("/heal.iso", 1<<20, false)
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url}); err != nil {
		t.Fatal(err)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))

	e.removeEntry(t, key, "/spec/template/spec/domain/devices/disks")
	e.eventually(t, "disk restored", func(ctx context.Context) error {
		vm, err := e.liveVM(ctx, key)
		if err != nil {
			return err
		}
		if disk, volume, _ := mediaPair(vm, slot); !disk || !volume {
			return fmt.Errorf("disk %v volume %v", disk, volume)
		}
		return nil
	})
	e.eventually(t, "heal counted", func(context.Context) error {
		if n := r.Stats().VolumesHealed; n < 1 {
			return fmt.Errorf("VolumesHealed = %d", n)
		}
		return nil
	})
	e.waitEvent(t, key, media.ReasonVolumeWithoutDisk)

	e.removeEntry(t, key, "/spec/template/spec/volumes")
	e.eventually(t, "disk without volume reported", func(context.Context) error {
		if r.Stats().DisksWithoutVol < 1 {
			return fmt.Errorf("not counted")
		}
		return nil
	})
	e.waitEvent(t, key, media.ReasonDiskWithoutVolume)
	if err := e.svc.Eject(t.Context(), key, slot); err != nil {
		t.Fatalf("Eject of the broken slot: %v", err)
	}
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	// The CD-ROM drive stays, empty (apply/build_hotplug.go).
	if disk, volume, _ := mediaPair(vm, slot); !disk || volume {
		t.Errorf("after Eject: disk %v volume %v, want the empty drive", disk, volume)
	}
}

// removeEntry removes the media-<slot> entry of the list at path with a JSON
// patch, as an outside Update writer (kubectl edit) would.
func (e *env) removeEntry(t *testing.T, key system.Key, path string) {
	t.Helper()
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var list []any
	obj := vm.Object.Object
	for i, f := range fields {
		if i == len(fields)-1 {
			list, _ = obj[f].([]any)
			break
		}
		obj, _ = obj[f].(map[string]any)
	}
	idx := -1
	for i, el := range list {
		if m, _ := el.(map[string]any); m["name"] == apply.DiskName(slot) {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no %s in %s", apply.DiskName(slot), path)
	}
	patch := fmt.Sprintf(`[{"op":"test","path":"%s/%d/name","value":%q},{"op":"remove","path":"%s/%d"}]`,
		path, idx, apply.DiskName(slot), path, idx)
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Patch(t.Context(), key.Name,
		types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatalf("break VM: %v", err)
	}
}

func (e *env) waitEvent(t *testing.T, key system.Key, reason string) {
	t.Helper()
	e.eventually(t, "event "+reason, func(ctx context.Context) error {
		evs, err := e.adminKube.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == key.Name && ev.Reason == reason && ev.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("no %s event for %s", reason, key)
	})
}

func checkImage(t *testing.T, e *env, claim string, want [32]byte) {
	t.Helper()
	data, err := os.ReadFile(e.sim.ImagePath(e.ns, claim))
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256.Sum256(data); got != want {
		t.Fatalf("image sha256 %x, want %x", got, want)
	}
}
