package fields

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	bridgemedia "github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// object builds an object of kind named name with labels, an owner
// reference to the VM of uid (none when uid is ""), and managedFields
// entries of (manager, operation, subresource).
func object(kind, name string, l map[string]string, uid types.UID, entries ...[3]string) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{}}
	u.SetKind(kind)
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetLabels(l)
	if uid != "" {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: kubevirt.APIVersion, Kind: kubevirt.Kind, Name: "vm", UID: uid}})
	}
	var mfs []metav1.ManagedFieldsEntry
	for _, e := range entries {
		mfs = append(mfs, metav1.ManagedFieldsEntry{Manager: e[0], Operation: metav1.ManagedFieldsOperationType(e[1]), Subresource: e[2],
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{}}`)})
	}
	u.SetManagedFields(mfs)
	return u
}

// withCreator prepends to u's managedFields the entry of manager creating
// it: the owner of the part-of label.
func withCreator(u unstructured.Unstructured, manager string) unstructured.Unstructured {
	mf := metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:` + bridgemedia.LabelPartOf + `":{}}}}`)}
	u.SetManagedFields(append([]metav1.ManagedFieldsEntry{mf}, u.GetManagedFields()...))
	return u
}

// deleting marks u as being deleted.
func deleting(u unstructured.Unstructured) unstructured.Unstructured {
	now := metav1.Now()
	u.SetDeletionTimestamp(&now)
	return u
}

// labelled are media's labels of an object of component (and slot).
func labelled(component, slot string, extra ...string) map[string]string {
	l := map[string]string{bridgemedia.LabelPartOf: bridgemedia.PartOf, bridgemedia.LabelComponent: component}
	if slot != "" {
		l[bridgemedia.LabelSlot] = slot
	}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

func TestInspectObjects(t *testing.T) {
	const uid = types.UID("uid-vm")
	claim := bridgemedia.ClaimName(system.Key{Namespace: "ns", Name: "vm"}, bridgemedia.DefaultSlot)
	serve := [3]string{ManagerServe, "Update", ""}
	media := labelled(bridgemedia.ComponentMedia, bridgemedia.DefaultSlot)
	for _, tc := range []struct {
		name string
		objs []unstructured.Unstructured
		want []Object
		devs []Deviation
	}{
		{name: "none", want: []Object{}},
		{
			name: "media PVC bound by the binder",
			objs: []unstructured.Unstructured{object("PersistentVolumeClaim", claim, media, uid,
				serve, [3]string{"kube-controller-manager", "Update", ""}, [3]string{"kube-controller-manager", "Update", "status"})},
			want: []Object{{Kind: "PersistentVolumeClaim", Name: claim, Role: "media slot cd0", Managers: []ObjectManager{
				{Name: ManagerServe, Operation: "Update", Bridge: true},
				{Name: "kube-controller-manager", Operation: "Update"},
				{Name: "kube-controller-manager", Operation: "Update", Subresource: "status"},
			}}},
		},
		{
			name: "import pod, check pod, secret, cache entry and its CAs, sorted",
			objs: []unstructured.Unstructured{
				object("Pod", bridgemedia.PodName(claim, "i1"), labelled(bridgemedia.ComponentImporter, "cd0"), uid, serve, [3]string{"kubelet", "Update", "status"}),
				object("Secret", "s", labelled(bridgemedia.ComponentImportSecret, "cd0"), uid, [3]string{apply.ManagerMedia, "Update", ""}),
				object("Pod", bridgemedia.PodName(claim, "i1")+"-check", labelled(bridgemedia.ComponentImporter, "cd0", bridgemedia.LabelImageCheck, "true"), uid, serve),
				object("ConfigMap", "redfish-image-k-1-ca", labelled(bridgemedia.ComponentImageCache, ""), uid, serve),
				object("DataVolume", "redfish-image-k-1", labelled(bridgemedia.ComponentImageCache, ""), uid, serve, [3]string{"cdi-controller", "Update", ""}),
			},
			want: []Object{
				{Kind: "ConfigMap", Name: "redfish-image-k-1-ca", Role: "cache entry CAs", Managers: []ObjectManager{{Name: ManagerServe, Operation: "Update", Bridge: true}}},
				{Kind: "DataVolume", Name: "redfish-image-k-1", Role: "cache entry", Managers: []ObjectManager{{Name: ManagerServe, Operation: "Update", Bridge: true}, {Name: "cdi-controller", Operation: "Update"}}},
				{Kind: "Pod", Name: bridgemedia.PodName(claim, "i1"), Role: "import pod cd0", Managers: []ObjectManager{{Name: ManagerServe, Operation: "Update", Bridge: true}, {Name: "kubelet", Operation: "Update", Subresource: "status"}}},
				{Kind: "Pod", Name: bridgemedia.PodName(claim, "i1") + "-check", Role: "check pod cd0", Managers: []ObjectManager{{Name: ManagerServe, Operation: "Update", Bridge: true}}},
				{Kind: "Secret", Name: "s", Role: "import secret cd0", Managers: []ObjectManager{{Name: apply.ManagerMedia, Operation: "Update", Bridge: true}}},
			},
		},
		{
			name: "another VM's, an unlabelled one and a same-named VM's old UID are not listed",
			objs: []unstructured.Unstructured{
				object("PersistentVolumeClaim", "other", media, "uid-other", serve),
				object("PersistentVolumeClaim", "mine", map[string]string{bridgemedia.LabelComponent: bridgemedia.ComponentMedia}, uid, serve),
				object("PersistentVolumeClaim", "free", media, "", serve),
			},
			want: []Object{},
		},
		{
			name: "kubectl edit of the media PVC is foreign",
			objs: []unstructured.Unstructured{object("PersistentVolumeClaim", claim, media, uid, serve, [3]string{"kubectl-edit", "Update", ""})},
			want: []Object{{Kind: "PersistentVolumeClaim", Name: claim, Role: "media slot cd0", Managers: []ObjectManager{
				{Name: ManagerServe, Operation: "Update", Bridge: true}, {Name: "kubectl-edit", Operation: "Update"}}}},
			devs: []Deviation{{Manager: "kubectl-edit", Path: "PersistentVolumeClaim/" + claim, Kind: "foreign"}},
		},
		{
			name: "the creator under a test binary's name is the bridge; another writer is not",
			objs: []unstructured.Unstructured{withCreator(object("Pod", "p", labelled(bridgemedia.ComponentImporter, "cd0"), uid, [3]string{"intruder", "Update", ""}), "service.test")},
			want: []Object{{Kind: "Pod", Name: "p", Role: "import pod cd0", Managers: []ObjectManager{
				{Name: "service.test", Operation: "Update", Bridge: true}, {Name: "intruder", Operation: "Update"}}}},
			devs: []Deviation{{Manager: "intruder", Path: "Pod/p", Kind: "foreign"}},
		},
		{
			name: "a PVC being deleted is listed, not checked",
			objs: []unstructured.Unstructured{deleting(object("PersistentVolumeClaim", claim, media, uid, serve, [3]string{"sim", "Update", ""}))},
			want: []Object{{Kind: "PersistentVolumeClaim", Name: claim, Role: "media slot cd0", Managers: []ObjectManager{
				{Name: ManagerServe, Operation: "Update", Bridge: true}, {Name: "sim", Operation: "Update"}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := vmWith(nil)
			vm.SetUID(uid)
			r, err := Inspect(vm, apply.ModeAtomic, "flag")
			if err != nil {
				t.Fatal(err)
			}
			InspectObjects(r, vm, tc.objs)
			if diff := cmp.Diff(tc.want, r.Objects); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			var devs []Deviation
			for _, d := range r.Deviations {
				d.Detail = ""
				devs = append(devs, d)
			}
			if diff := cmp.Diff(tc.devs, devs); diff != "" {
				t.Errorf("deviations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteTextObjects(t *testing.T) {
	vm := vmWith(nil)
	vm.SetUID("u")
	r, err := Inspect(vm, apply.ModeAtomic, "crd")
	if err != nil {
		t.Fatal(err)
	}
	InspectObjects(r, vm, []unstructured.Unstructured{
		object("PersistentVolumeClaim", "redfish-image-k", labelled(bridgemedia.ComponentImageCache, ""), "u",
			[3]string{ManagerServe, "Update", ""}, [3]string{"intruder", "Apply", ""}, [3]string{"kube-controller-manager", "Update", "status"}),
	})
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `VirtualMachine ns/vm  (list mode: atomic, from crd)

objects of the bridge's (1):
  PersistentVolumeClaim redfish-image-k  (cache entry)  redfish-bridge Update, intruder Apply, kube-controller-manager Update/status

DEVIATIONS (1):
  foreign  intruder owns PersistentVolumeClaim/redfish-image-k: PersistentVolumeClaim (cache entry) is the bridge's: only redfish-bridge, redfish-media and status writers should write it
`
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(b.String(), "\n")); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}
