package media_test

import (
	"context"
	"crypto/sha256"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// CDI's PVC annotations (CDI's pkg/controller/common) the tests read: what
// cdi-controller writes on the PVC it makes for a DataVolume.
const (
	cdiAnnEndpoint  = "cdi.kubevirt.io/storage.import.endpoint"
	cdiAnnImportPod = "cdi.kubevirt.io/storage.import.importPodName"
	cdiAnnPodPhase  = "cdi.kubevirt.io/storage.pod.phase"
)

// startCDINode runs the simulator's node side of CDI until the test ends.
func (e *env) startCDINode(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.sim.RunCDINode(ctx, e.cluster.CDIPodIP()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("simulated CDI node: %v", err)
		}
	})
}

// testCDIControllerInsert: an insert becomes a DataVolume; cdi-controller
// makes its PVC (annotated with the import's endpoint) and importer pod;
// the image lands in the PVC and the slot is Ready (Inserted), the VM's
// media pointing at the DataVolume's PVC.
func testCDIControllerInsert(t *testing.T, e *env) {
	key := e.createVM(t, vmName(t))
	url, sum := e.img.add("/cdi-controller.iso", 3<<20+5, false)
	got, _ := e.insertAsDataVolume(t, key, url)
	ready := e.waitSlot(t, key, slot, "Ready", phaseIs(system.MediaReady))
	if ready.Method != media.ImportMethodCDI || ready.InsertID != got.InsertID {
		t.Errorf("ready slot %+v, want method cdi, insert %s", ready, got.InsertID)
	}
	data, err := os.ReadFile(e.sim.ImagePath(e.ns, got.ClaimName))
	if err != nil || sha256.Sum256(data) != sum {
		t.Fatalf("imported %d bytes (err %v): not the served image", len(data), err)
	}
	pvc, err := e.adminKube.CoreV1().PersistentVolumeClaims(e.ns).Get(t.Context(), got.ClaimName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ann := pvc.Annotations
	if ann[cdiAnnEndpoint] != url || ann[cdiAnnImportPod] == "" || ann[cdiAnnPodPhase] != "Succeeded" {
		t.Errorf("PVC %s annotations %v: want cdi-controller's, endpoint %s, importer pod, phase Succeeded", pvc.Name, ann, url)
	}
	if ref := metav1.GetControllerOf(pvc); ref == nil || ref.Kind != "DataVolume" || ref.Name != got.ClaimName {
		t.Errorf("PVC %s controller %v, want DataVolume %s", pvc.Name, ref, got.ClaimName)
	}
	// The DataVolume stays: it owns the PVC holding the image.
	dv, err := e.admin.Resource(media.DataVolumeResource).Namespace(e.ns).Get(t.Context(), got.ClaimName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase"); phase != "Succeeded" {
		t.Errorf("DataVolume phase %q, want Succeeded", phase)
	}
	vm, err := e.liveVM(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if disk, volume, claim := mediaPair(vm, slot); !disk || !volume || claim != got.ClaimName {
		t.Errorf("VM media: disk %v volume %v claim %q, want the DataVolume's PVC %s", disk, volume, claim, got.ClaimName)
	}
	e.noImportPods(t, key)
}
