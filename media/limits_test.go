package media_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// claimRequest is the live PVC's requested size.
func (e *env) claimRequest(t *testing.T, name string) resource.Quantity {
	t.Helper()
	pvc, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("PVC %s: %v", name, err)
	}
	return pvc.Spec.Resources.Requests[corev1.ResourceStorage]
}

// testPVCSizedFromTheImage: the bridge never contacts the image server; the
// import pod reports an image larger than its PVC, with its real size when
// the server does not announce one, and the PVC is re-created to fit.
func testPVCSizedFromTheImage(t *testing.T, e *env) {
	r, stop := e.startReconciler(t, func(o *media.Options) { o.DefaultSize = resource.MustParse("1Mi") })
	defer stop()
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		creds   bool // the import Secret must outlive the first pod
	}{
		{"announced", 3<<20 + 17, false, false},
		{"unannounced", 5 << 20, true, false},
		{"with credentials", 2 << 20, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := e.createVM(t, strings.ReplaceAll(vmName(t), " ", "-"))
			add := func(p string, n int) (string, [32]byte) { return e.img.add(p, n, false) }
			if tc.chunked {
				add = e.img.addChunked
			}
			url, sum := add("/sized-"+strings.ReplaceAll(tc.name, " ", "-")+".iso", tc.size)
			before := r.Stats()
			req := system.MediaInsert{Image: url}
			if tc.creds {
				req.UserName, req.Password = "reader", "secret-pw"
			}
			ins, err := e.svc.Insert(t.Context(), key, slot, req)
			if err != nil {
				t.Fatal(err)
			}
			ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
			if ready.SizeBytes != int64(tc.size) {
				t.Errorf("SizeBytes %d, want %d", ready.SizeBytes, tc.size)
			}
			if got, want := e.claimRequest(t, ins.ClaimName), download.ClaimSize(int64(tc.size), resource.Quantity{}); got.Cmp(want) != 0 {
				t.Errorf("PVC %s, want %s", got.String(), want.String())
			}
			data, err := os.ReadFile(e.sim.ImagePath(e.ns, ins.ClaimName))
			if err != nil {
				t.Fatal(err)
			}
			if sha256.Sum256(data) != sum {
				t.Errorf("imported image (%d bytes) differs from the served one", len(data))
			}
			after := r.Stats()
			if pods, claims := after.PodsCreated-before.PodsCreated, after.ClaimsCreated-before.ClaimsCreated; pods != 2 || claims != 2 {
				t.Errorf("%d import pods and %d PVCs created, want 2 and 2 (one to learn the size, one to import)", pods, claims)
			}
			e.noImportPods(t, key)
		})
	}
}

// testImageTooLarge: an image past the maximum image size fails the import
// with a message that says so, whether the server announces it (even
// 1 PiB or MaxInt64, which once wrapped to a 64Mi PVC) or just keeps
// sending; no PVC is ever sized for it (the one PVC made, at the default
// size, is released with the failure).
func testImageTooLarge(t *testing.T, e *env) {
	r, stop := e.startReconciler(t, func(o *media.Options) {
		o.DefaultSize = resource.MustParse("1Mi")
		o.MaxImageSize = 4 << 20
	})
	defer stop()
	chunked, _ := e.img.addChunked("/too-large-chunked.iso", 6<<20)
	for _, tc := range []struct {
		name, url, want string
	}{
		{"1PiB announced", e.img.announce("/one-pib.iso", 1<<50), "image is 1125899906842624 bytes (1Pi), more than the maximum image size 4Mi"},
		{"MaxInt64 announced", e.img.announce("/maxint.iso", math.MaxInt64), "image is 9223372036854775807 bytes"},
		{"sent without length", chunked, "more than the maximum image size 4Mi (stopped after"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			key := e.createVM(t, strings.ToLower(strings.ReplaceAll(tc.name, " ", "-")))
			created := r.Stats().ClaimsCreated
			if _, err := e.svc.Insert(t.Context(), key, slot, system.MediaInsert{Image: tc.url}); err != nil {
				t.Fatal(err)
			}
			e.waitFailed(t, key, tc.want)
			if n := r.Stats().ClaimsCreated - created; n > 1 {
				t.Errorf("%d PVCs created for a refused image, want the one at the default size", n)
			}
		})
	}
}

// testForeignObjectsKept: a PVC called <vm>-media-cd0 and an import-looking
// pod the bridge did not make for this VM survive EjectMedia, and an insert
// fails with a message naming the PVC instead of using or deleting it.
// Without the ownership check, Eject of the empty slot deleted the PVC.
func testForeignObjectsKept(t *testing.T, e *env) {
	_, stop := e.startReconciler(t, nil)
	defer stop()
	ctx := t.Context()
	key := e.createVM(t, vmName(t))
	claim := media.ClaimName(key, slot)
	pvc, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Looks like the bridge's, owned by the VM's name, but not its UID.
	impostor := []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: key.Name, UID: "00000000-0000-0000-0000-000000000000", Controller: ptr.To(false)}}
	pod, err := e.adminKube.CoreV1().Pods(e.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: claim + "-foreign", OwnerReferences: impostor, Labels: map[string]string{
			media.LabelComponent: media.ComponentImporter, media.LabelPartOf: media.PartOf, media.LabelSlot: slot,
		}},
		Spec: corev1.PodSpec{NodeName: "elsewhere", Containers: []corev1.Container{{Name: "x", Image: "tenant/app"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kept := func(what string) {
		t.Helper()
		got, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, claim, metav1.GetOptions{})
		if err != nil || got.UID != pvc.UID || got.DeletionTimestamp != nil {
			t.Fatalf("%s: the foreign PVC %s was deleted (err %v)", what, claim, err)
		}
		p, err := e.adminKube.CoreV1().Pods(e.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || p.UID != pod.UID || p.DeletionTimestamp != nil {
			t.Fatalf("%s: the foreign pod %s was deleted (err %v)", what, pod.Name, err)
		}
	}

	if err := e.svc.Eject(ctx, key, slot); err != nil {
		t.Fatalf("Eject of the empty slot: %v", err)
	}
	kept("Eject of an empty slot")

	// Same name, the bridge's labels, an ownerReference to the VM's name
	// with another UID: still not the bridge's.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":          map[string]string{media.LabelComponent: media.ComponentMedia, media.LabelPartOf: media.PartOf, media.LabelSlot: slot},
		"ownerReferences": impostor,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Patch(ctx, claim, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Eject(ctx, key, slot); err != nil {
		t.Fatalf("Eject of the empty slot: %v", err)
	}
	kept("Eject with an impostor ownerReference")

	url, _ := e.img.add("/foreign.iso", 1<<20, false)
	if _, err := e.svc.Insert(ctx, key, slot, system.MediaInsert{Image: url}); err != nil {
		t.Fatal(err)
	}
	// (not waitFailed: the impostor pod looks like an import pod of this VM)
	failed := e.waitSlot(t, key, slot, "Failed", phaseIs(system.MediaFailed))
	if want := fmt.Sprintf("PVC %s/%s exists and was not created by redfish-bridge", e.ns, claim); !strings.Contains(failed.Reason, want) {
		t.Errorf("Reason %q, want it to contain %q", failed.Reason, want)
	}
	kept("insert over a foreign PVC")
	if err := e.svc.Eject(ctx, key, slot); err != nil {
		t.Fatal(err)
	}
	kept("Eject of the failed slot")
	e.eventually(t, "cleanup", func(ctx context.Context) error {
		_ = e.adminKube.CoreV1().Pods(e.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		return e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Delete(ctx, claim, metav1.DeleteOptions{})
	})
}
