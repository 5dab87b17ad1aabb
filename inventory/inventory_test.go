package inventory

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

func vm(ns, name string, lbls map[string]string) *unstructured.Unstructured {
	u := testutil.VM(ns, name, "Halted")
	u.SetLabels(lbls)
	return u
}

// TestInventory: namespace scoping, NotFound, label selection, PVCs and the
// VM handler, on a real apiserver with the bridge's RBAC'd identity.
func TestInventory(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver")
	}
	c := testcluster.ForTest(t, crds.Stock)
	ctx := t.Context()
	cl := newTestClients(t, c)
	admin := cl.admin
	for _, ns := range []string{"watched", "other"} {
		if err := c.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		for _, u := range []*unstructured.Unstructured{vm(ns, "a", map[string]string{"pool": "x"}), vm(ns, "b", nil)} {
			if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "iso", Namespace: "watched"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := cl.adminKube.CoreV1().PersistentVolumeClaims("watched").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	inv, err := Start(ctx, cl.bridge, cl.bridgeKube, []string{"watched"})
	if err != nil {
		t.Fatal(err)
	}

	if _, err := inv.VM(system.Key{Namespace: "watched", Name: "a"}); err != nil {
		t.Errorf("VM watched/a: %v", err)
	}
	for _, k := range []system.Key{{Namespace: "other", Name: "a"}, {Namespace: "watched", Name: "zz"}} {
		if _, err := inv.VM(k); !apierrors.IsNotFound(err) {
			t.Errorf("VM %s: err %v, want NotFound", k, err)
		}
	}
	if _, err := inv.VMI(system.Key{Namespace: "watched", Name: "a"}); !apierrors.IsNotFound(err) {
		t.Errorf("VMI of a stopped VM: err %v, want NotFound", err)
	}
	names := func(ns string, sel labels.Selector) []string {
		t.Helper()
		us, err := inv.ListVMs(ns, sel)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, u := range us {
			out = append(out, u.GetNamespace()+"/"+u.GetName())
		}
		return sortStrings(out)
	}
	if diff := cmp.Diff([]string{"watched/a", "watched/b"}, names("", nil)); diff != "" {
		t.Errorf("ListVMs all (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"watched/a"}, names("watched", labels.SelectorFromSet(labels.Set{"pool": "x"}))); diff != "" {
		t.Errorf("ListVMs selector (-want +got):\n%s", diff)
	}
	if got := names("other", nil); len(got) != 0 {
		t.Errorf("ListVMs of an unwatched namespace: %v", got)
	}
	if _, err := inv.PVC("watched", "iso"); err != nil {
		t.Errorf("PVC watched/iso: %v", err)
	}

	seen := make(chan system.Key, 16)
	remove, err := inv.AddVMHandler(func(k system.Key) {
		select {
		case seen <- k:
		default: // never block the informer
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := remove(); err != nil {
			t.Error(err)
		}
	}()
	drainUntil := func(want system.Key) {
		t.Helper()
		failAt := time.After(time.Minute) // only to fail: the call is the event
		for {
			select {
			case k := <-seen:
				if k == want {
					return
				}
			case <-failAt:
				t.Fatalf("handler never called with %s", want)
			}
		}
	}
	drainUntil(system.Key{Namespace: "watched", Name: "b"}) // replay of existing VMs
	patch := []byte(`{"metadata":{"labels":{"pool":"y"}}}`)
	if _, err := admin.Resource(kubevirt.VirtualMachines).Namespace("watched").Patch(ctx, "b", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	drainUntil(system.Key{Namespace: "watched", Name: "b"})
}

func sortStrings(in []string) []string {
	for i := range in {
		for j := i + 1; j < len(in); j++ {
			if in[j] < in[i] {
				in[i], in[j] = in[j], in[i]
			}
		}
	}
	return in
}
