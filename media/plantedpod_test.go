package media_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// testPlantedImportPodRefused performs the attack of docs/reliability.md
// row 199: a namespace user reads the accepted insert's ID from the VM and
// creates the import pod the bridge is about to create, under its name,
// with its labels and an owner reference carrying the VM's real UID
// (readable by any namespace user), running the tenant's own image (which
// would report the import's bytes and sha256). The bridge must not take it
// for its own: the insert fails naming the pod, and the pod is left.
// Without the MAC the bridge adopts the planted pod as its import.
func testPlantedImportPodRefused(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, vmName(t))
	url, _ := e.img.add("/planted-pod.iso", 1<<20, false)
	if _, err := e.svc.Insert(ctx, key, slot, system.MediaInsert{Image: url}); err != nil {
		t.Fatal(err)
	}
	// No reconciler runs yet: the tenant comes first.
	accepted := e.waitSlot(t, key, slot, "accepted", func(s system.MediaSlot) bool { return s.InsertID != "" && s.ClaimName != "" })
	vm, err := e.liveVM(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	owner := importer.Owner{Key: key, UID: vm.Object.GetUID()}
	planted := importer.PodFor(owner, accepted, "tenant.example/forger:1", download.ImportRequest{})
	planted, err = e.adminKube.CoreV1().Pods(e.ns).Create(ctx, planted, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.adminKube.CoreV1().Pods(e.ns).Delete(context.WithoutCancel(ctx), planted.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})

	_, stop := e.startReconciler(t, nil)
	defer stop()
	failed := e.waitSlot(t, key, slot, "Failed", phaseIs(system.MediaFailed))
	if want := fmt.Sprintf("pod %s/%s exists and was not created by redfish-bridge", e.ns, planted.Name); !strings.Contains(failed.Reason, want) {
		t.Errorf("Reason %q, want it to contain %q", failed.Reason, want)
	}
	got, err := e.adminKube.CoreV1().Pods(e.ns).Get(ctx, planted.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		t.Errorf("the planted pod %s was deleted", planted.Name)
	case err != nil:
		t.Fatal(err)
	case got.UID != planted.UID || got.DeletionTimestamp != nil:
		t.Errorf("the planted pod %s was replaced or deleted", planted.Name)
	}
	if err := e.svc.Eject(ctx, key, slot); err != nil {
		t.Fatal(err)
	}
}
