package media

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestEjectThroughEachMethod: Eject deletes import objects only through
// the import methods' ejectors, each deleting its own kind (the pod
// method its import pods, the CDI method its check pods) of the slot and
// VM, and nothing of another slot or VM.
func TestEjectThroughEachMethod(t *testing.T) {
	vm := owner{Key: system.Key{Namespace: "ns", Name: "vm1"}, UID: "uid-1"}
	other := owner{Key: system.Key{Namespace: "ns", Name: "vm2"}, UID: "uid-2"}
	pod := func(o owner, slot, name string, check bool) runtime.Object {
		s := system.MediaSlot{Slot: slot, Image: "https://images.example/a.iso", ClaimName: ClaimName(o.Key, slot), InsertID: "0123456789abcdef"}
		p := importer.PodFor(o, s, "img", download.ImportRequest{})
		p.Name = name
		if check {
			p.Labels[LabelImageCheck] = "true"
		}
		return p
	}
	objects := func() []runtime.Object {
		return []runtime.Object{
			pod(vm, "cd0", "import-cd0", false),
			pod(vm, "cd0", "check-cd0", true),
			pod(vm, "usb0", "import-usb0", false),
			pod(other, "cd0", "other-vm-import-cd0", false),
			pod(other, "cd0", "other-vm-check-cd0", true),
		}
	}
	kept := []string{"import-usb0", "other-vm-check-cd0", "other-vm-import-cd0"}
	for _, tc := range []struct {
		name    string
		methods []string // "": every registered method, as Service.Eject
		want    []string
	}{
		{name: "pod method", methods: []string{ImportMethodPod}, want: append([]string{"check-cd0"}, kept...)},
		{name: "CDI method", methods: []string{ImportMethodCDI}, want: append([]string{"import-cd0"}, kept...)},
		{name: "every method", want: kept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubefake.NewClientset(objects()...)
			svc := NewService(nil, kube)
			var ejectors []importer.Ejector
			for i, f := range importer.Registered() {
				if tc.methods == nil || slices.Contains(tc.methods, f.Method) {
					ejectors = append(ejectors, svc.ejectors[i])
				}
			}
			for _, e := range ejectors {
				if err := e.Eject(t.Context(), vm, "cd0"); err != nil {
					t.Fatalf("eject: %v", err)
				}
			}
			l, err := kube.CoreV1().Pods("ns").List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range l.Items {
				got = append(got, p.Name)
			}
			slices.Sort(got)
			slices.Sort(tc.want)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pods left after eject (-want +got):\n%s", diff)
			}
		})
	}
}
