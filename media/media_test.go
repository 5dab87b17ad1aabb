package media_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

const slot = media.DefaultSlot

// TestMedia runs every virtual-media scenario on a real apiserver with the
// simulator, once per CRD variant.
func TestMedia(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	for _, v := range []crds.Variant{crds.Stock, crds.MapList} {
		t.Run(string(v), func(t *testing.T) {
			e := newEnv(t, v)
			for _, tc := range []struct {
				name string
				run  func(*testing.T, *env)
			}{
				{"InsertImportsToReady", testInsertImportsToReady},
				{"FailedURL", testFailedURL},
				{"ReinsertSameURL", testReinsertSameURL},
				{"BusyConflict", testBusyConflict},
				{"Eject", testEject},
				{"Restart", testRestart},
				{"StaleImportIgnored", testStaleImport},
				{"Timeout", testTimeout},
				{"HealVolumeWithoutDisk", testHealVolumeWithoutDisk},
				{"PVCSizedFromTheImage", testPVCSizedFromTheImage},
				{"ImageTooLarge", testImageTooLarge},
				{"ForeignObjectsKept", testForeignObjectsKept},
				{"PlantedImportPodRefused", testPlantedImportPodRefused},
				{"AddrPolicyConfigured", testAddrPolicyConfigured},
				{"InsertIntoRunningVM", testInsertIntoRunningVM},
				{"InsertIntoRunningVMWithoutDrive", testInsertIntoRunningVMWithoutDrive},
			} {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
			}
		})
	}
}

// vmName is a per-test VM name, DNS-safe.
func vmName(t *testing.T) string {
	parts := strings.Split(t.Name(), "/")
	return strings.ReplaceAll(strings.ToLower(parts[len(parts)-1]), "_", "-")
}

func testInsertImportsToReady(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	url, sum := e.img.add("/ready.iso", 3<<20+17, true)

	got, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatalf("Insert: %v", err)
	}
	// Recorded on the VM before Insert returned: a live read sees it Busy.
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	recorded := vm.Slots[slot]
	if recorded.Phase != system.MediaPending || recorded.InsertID == "" || recorded.InsertID != got.InsertID {
		t.Fatalf("right after Insert the VM records %+v; Insert returned %+v", recorded, got)
	}
	if recorded.ClaimName != media.ClaimName(key, slot) || recorded.Image != url {
		t.Fatalf("recorded slot %+v: wrong claim or image", recorded)
	}
	// The reconciler starts only now, so the Pending record above can only
	// have come from Insert itself.
	_, stop := e.startReconciler(t, nil)
	defer stop()

	importing := e.waitSlot(t, key, slot, "Importing", phaseIs(system.MediaImporting))
	if importing.InsertID != got.InsertID {
		t.Fatalf("InsertID changed to %s", importing.InsertID)
	}
	e.eventually(t, "import pod of this insert running", func(ctx context.Context) error {
		pods, err := e.pods(ctx, key, slot)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Labels[media.LabelInsertID] == got.InsertID && p.Status.Phase == corev1.PodRunning && ownerIs(&p, key.Name) {
				return nil
			}
		}
		return fmt.Errorf("pods: %v", podSummary(pods))
	})
	pvc, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(t.Context(), got.ClaimName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("PVC: %v", err)
	}
	// The bridge never asked the image server: the PVC has the default size.
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.Cmp(resource.MustParse("8Gi")) != 0 {
		t.Errorf("PVC size %s, want the default 8Gi", size.String())
	}
	if !ownerIs(pvc, key.Name) {
		t.Errorf("PVC owner references %v", pvc.OwnerReferences)
	}

	e.img.open("/ready.iso")
	ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	if ready.SizeBytes != 3<<20+17 || ready.InsertID != got.InsertID || ready.Method != media.ImportMethodPod {
		t.Errorf("Ready slot %+v: want SizeBytes %d, InsertID %s, imported by the pod (no CDI here)", ready, 3<<20+17, got.InsertID)
	}
	data, err := os.ReadFile(e.sim.ImagePath(e.ns, got.ClaimName))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(data) != sum {
		t.Fatalf("imported image sha256 differs from the served bytes")
	}
	vm, err = e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	disk, volume, claim := mediaPair(vm, slot)
	if !disk || !volume || claim != got.ClaimName {
		t.Errorf("Ready VM: cdrom disk %v, volume %v (claim %q)", disk, volume, claim)
	}
	e.noImportPods(t, key)
}

func testFailedURL(t *testing.T, e *env) {
	_, stop := e.startReconciler(t, nil)
	defer stop()
	key := e.createVM(t, vmName(t))
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: e.img.URL + "/missing.iso"}); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	e.waitFailed(t, key, "404")
}

// waitFailed waits for the slot to fail with a Reason containing want; no
// attachment, import pod or PVC (claimReleased) is left.
func (e *env) waitFailed(t *testing.T, key system.Key, want string) {
	t.Helper()
	failed := e.waitSlot(t, key, slot, "Failed", phaseIs(system.MediaFailed))
	if !strings.Contains(failed.Reason, want) {
		t.Errorf("Reason %q, want it to contain %q", failed.Reason, want)
	}
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if disk, volume, _ := mediaPair(vm, slot); disk || volume {
		t.Errorf("failed import attached: disk %v volume %v", disk, volume)
	}
	e.noImportPods(t, key)
	e.claimReleased(t, key, slot)
}

func testReinsertSameURL(t *testing.T, e *env) {
	_, stop := e.startReconciler(t, nil)
	defer stop()
	key := e.createVM(t, vmName(t))
	url, _ := e.img.add("/same.iso", 1<<20, false)
	first, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatal(err)
	}
	pending, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))

	// Ironic reuses one URL for inspection, cleaning and deployment: the
	// image behind it may have changed, so it is imported again, even
	// when the bridge's cache still shows the first import in flight (a
	// cache a moment behind once made this insert return the old one).
	url2, sum2 := e.img.add("/same.iso", 2<<20, true)
	if url2 != url {
		t.Fatal("test bug: URL changed")
	}
	behind := newService(staleReads{Client: e.w, vm: pending}, e.kube)
	second, err := behind.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatal(err)
	}
	if second.InsertID == first.InsertID || second.Phase != system.MediaPending {
		t.Fatalf("re-insert gave %+v after %+v: want a new Pending insert", second, first)
	}
	e.eventually(t, "new import pod", func(ctx context.Context) error {
		pods, err := e.pods(ctx, key, slot)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if ownerIs(&p, key.Name) && p.Labels[media.LabelInsertID] == second.InsertID {
				return nil
			}
		}
		return fmt.Errorf("pods: %v", podSummary(pods))
	})
	e.img.open("/same.iso")
	ready := e.waitSlot(t, key, slot, "Ready again", func(s system.MediaSlot) bool {
		return s.Phase == system.MediaReady && s.InsertID == second.InsertID
	})
	if ready.SizeBytes != 2<<20 {
		t.Errorf("SizeBytes %d, want %d", ready.SizeBytes, 2<<20)
	}
	data, err := os.ReadFile(e.sim.ImagePath(e.ns, ready.ClaimName))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(data) != sum2 {
		t.Fatal("re-imported image is not the new content")
	}
}

// staleReads is a Writer whose cache is stuck at vm: its writes go
// through the Client, which reads live before it believes a no-change.
type staleReads struct {
	*apply.Client
	vm *apply.VM
}

func (s staleReads) Read(context.Context, system.Key) (*apply.VM, error) { return s.vm, nil }

func testBusyConflict(t *testing.T, e *env) {
	_, stop := e.startReconciler(t, nil)
	defer stop()
	key := e.createVM(t, vmName(t))
	urlA, _ := e.img.add("/busy-a.iso", 1<<20, true)
	urlB, _ := e.img.add("/busy-b.iso", 1<<20, false)
	a, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: urlA})
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: urlA})
	if err != nil {
		t.Fatalf("same URL while busy: %v", err)
	}
	// The same insert, read live: the reconciler may have moved it on
	// (Pending to Importing) in between.
	if again.InsertID != a.InsertID || again.Image != a.Image || again.ClaimName != a.ClaimName || !again.Phase.Busy() {
		t.Errorf("same URL while busy must return the in-flight slot: first %+v, again %+v", a, again)
	}
	e.waitSlot(t, key, slot, "Importing", phaseIs(system.MediaImporting))
	_, err = e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: urlB})
	var busy *media.BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("different URL while busy: err = %v, want *media.BusyError", err)
	}
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: "ftp://host/x.iso"}); !isInvalidURL(err) {
		t.Errorf("ftp URL: err = %v, want *media.InvalidURLError", err)
	}
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if s := vm.Slots[slot]; s.Image != urlA || s.InsertID != a.InsertID {
		t.Errorf("slot changed by a refused insert: %+v", s)
	}
	e.img.open("/busy-a.iso")
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
}

func testEject(t *testing.T, e *env) {
	r, stop := e.startReconciler(t, nil)
	defer stop()
	key := e.createVM(t, vmName(t))
	url, _ := e.img.add("/eject.iso", 1<<20, false)
	ins, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url})
	if err != nil {
		t.Fatal(err)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))

	if err := e.svc.Eject(t.Context(), key, slot); err != nil {
		t.Fatalf("Eject: %v", err)
	}
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := vm.Slots[slot]; ok {
		t.Errorf("slot still recorded after Eject: %+v", s)
	}
	// The CD-ROM drive stays, empty (apply/build_hotplug.go).
	if disk, volume, _ := mediaPair(vm, slot); !disk || volume {
		t.Errorf("after Eject: disk %v volume %v, want the empty drive", disk, volume)
	}
	if _, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(t.Context(), ins.ClaimName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("PVC after Eject: err = %v, want NotFound", err)
	}
	e.noImportPods(t, key)
	if err := e.svc.Eject(t.Context(), key, slot); err != nil {
		t.Errorf("Eject of an empty slot: %v", err)
	}

	// Eject while importing: the pod goes too and no import finishes later.
	url2, _ := e.img.add("/eject-busy.iso", 1<<20, true)
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url2}); err != nil {
		t.Fatal(err)
	}
	e.waitSlot(t, key, slot, "Importing", phaseIs(system.MediaImporting))
	if err := e.svc.Eject(t.Context(), key, slot); err != nil {
		t.Fatalf("Eject while importing: %v", err)
	}
	e.img.open("/eject-busy.iso")
	e.noImportPods(t, key)
	e.eventually(t, "PVC gone", func(ctx context.Context) error {
		_, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, ins.ClaimName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("PVC still there (err %w)", err)
	})
	vm, err = e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := vm.Slots[slot]; ok {
		t.Errorf("slot came back after Eject: %+v", s)
	}

	// An eject interrupted between its apply and its deletes (the bridge
	// died): the reconciler frees the PVC of the empty slot.
	url3, _ := e.img.add("/eject-crash.iso", 1<<20, false)
	if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: url3}); err != nil {
		t.Fatal(err)
	}
	e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	if _, err := e.w.Media(t.Context(), key, func(_ *apply.VM, slots map[string]system.MediaSlot) error {
		delete(slots, slot)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, "PVC of the empty slot freed", func(ctx context.Context) error {
		_, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, ins.ClaimName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("PVC still there (err %w)", err)
	})
	// The reconcile passes above saw the drive empty after each eject: a
	// drive kept on purpose (apply.KeptDrives), not a disk missing its volume.
	if n := r.Stats().DisksWithoutVol; n != 0 {
		t.Errorf("the empty drive was reported %d times as a disk without its volume", n)
	}
}

func isInvalidURL(err error) bool {
	var iu *download.InvalidURLError
	return errors.As(err, &iu)
}

func ownerIs(obj metav1.Object, name string) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.Kind == "VirtualMachine" && r.Name == name && r.Controller != nil && !*r.Controller {
			return true
		}
	}
	return false
}

func podSummary(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, fmt.Sprintf("%s(%s,%s)", p.Name, p.Labels[media.LabelInsertID], p.Status.Phase))
	}
	return out
}

// noImportPods waits until no import pod of the slot is left.
func (e *env) noImportPods(t *testing.T, key system.Key) {
	t.Helper()
	e.eventually(t, "no import pods left", func(ctx context.Context) error {
		pods, err := e.pods(ctx, key, slot)
		if err != nil {
			return err
		}
		if len(pods) > 0 {
			return fmt.Errorf("pods: %v", podSummary(pods))
		}
		return nil
	})
}
