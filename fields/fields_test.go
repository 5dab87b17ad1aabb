package fields

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
)

// vmWith builds a VM whose managedFields are entries of (manager,
// operation, FieldsV1 JSON).
func vmWith(annotations map[string]string, entries ...[3]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetNamespace("ns")
	u.SetName("vm")
	u.SetAnnotations(annotations)
	var mfs []metav1.ManagedFieldsEntry
	for _, e := range entries {
		mfs = append(mfs, metav1.ManagedFieldsEntry{Manager: e[0], Operation: metav1.ManagedFieldsOperationType(e[1]),
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(e[2])})
	}
	u.SetManagedFields(mfs)
	return u
}

const (
	tmplF     = `"f:spec":{"f:template":{"f:spec":`
	mediaDisk = `{"f:domain":{"f:devices":{"f:disks":{"k:{\"name\":\"media-cd0\"}":{".":{},"f:name":{},"f:cdrom":{"f:bus":{},"f:readonly":{}}}}}}}`
)

func TestInspect(t *testing.T) {
	mediaAnn := map[string]string{apply.AnnotationMediaPrefix + "cd0": "{}"}
	for _, tc := range []struct {
		name  string
		mode  apply.Mode
		vm    *unstructured.Unstructured
		want  []Deviation
		notes int
	}{
		{
			name: "map: media owns its CD-ROM",
			mode: apply.ModeMap,
			vm:   vmWith(mediaAnn, [3]string{apply.ManagerMedia, "Apply", `{` + tmplF + mediaDisk + `}}}`}),
		},
		{
			name: "map: media owns its hotplugged volume",
			mode: apply.ModeMap,
			vm: vmWith(mediaAnn, [3]string{apply.ManagerMedia, "Apply",
				`{` + tmplF + `{"f:volumes":{"k:{\"name\":\"media-cd0\"}":{".":{},"f:name":{},"f:persistentVolumeClaim":{"f:claimName":{},"f:hotpluggable":{}}}}}}}}`}),
		},
		{
			name: "map: media owns another disk",
			mode: apply.ModeMap,
			vm: vmWith(nil, [3]string{apply.ManagerMedia, "Apply",
				`{` + tmplF + `{"f:domain":{"f:devices":{"f:disks":{"k:{\"name\":\"rootdisk\"}":{"f:bootOrder":{}}}}}}}}}`}),
			want: []Deviation{{Manager: apply.ManagerMedia, Path: `.spec.template.spec.domain.devices.disks[name="rootdisk"].bootOrder`, Kind: "outside"}},
		},
		{
			name: "atomic: media owning the whole list is allowed",
			mode: apply.ModeAtomic,
			vm:   vmWith(nil, [3]string{apply.ManagerMedia, "Apply", `{` + tmplF + `{"f:domain":{"f:devices":{"f:disks":{}}},"f:volumes":{}}}}}`}),
		},
		{
			name: "atomic: boot owning secure boot and SMM is allowed, media is not",
			mode: apply.ModeAtomic,
			vm: vmWith(nil,
				[3]string{apply.ManagerBoot, "Apply", `{` + tmplF + `{"f:domain":{"f:features":{"f:smm":{"f:enabled":{}}},"f:firmware":{"f:bootloader":{"f:efi":{"f:secureBoot":{}}}}}}}}}`},
				[3]string{apply.ManagerMedia, "Apply", `{` + tmplF + `{"f:domain":{"f:features":{"f:smm":{"f:enabled":{}}}}}}}}`}),
			want: []Deviation{{Manager: apply.ManagerMedia, Path: `.spec.template.spec.domain.features.smm.enabled`, Kind: "outside"}},
		},
		{
			name: "atomic: power owning disks is not",
			mode: apply.ModeAtomic,
			vm:   vmWith(nil, [3]string{apply.ManagerPower, "Apply", `{` + tmplF + `{"f:domain":{"f:devices":{"f:disks":{}}}}}}}`}),
			want: []Deviation{{Manager: apply.ManagerPower, Path: `.spec.template.spec.domain.devices.disks`, Kind: "outside"}},
		},
		{
			name: "map: an edit of the claimed CD-ROM",
			mode: apply.ModeMap,
			vm:   vmWith(mediaAnn, [3]string{"kubectl-edit", "Update", `{` + tmplF + mediaDisk + `}}}`}),
			want: []Deviation{
				{Manager: "kubectl-edit", Path: `.spec.template.spec.domain.devices.disks[name="media-cd0"].cdrom.bus`, Kind: "taken"},
				{Manager: "kubectl-edit", Path: `.spec.template.spec.domain.devices.disks[name="media-cd0"].cdrom.readonly`, Kind: "taken"},
				{Manager: "kubectl-edit", Path: `.spec.template.spec.domain.devices.disks[name="media-cd0"].name`, Kind: "taken"},
			},
		},
		{
			name: "map: a media-named disk the bridge never claimed",
			mode: apply.ModeMap,
			vm:   vmWith(nil, [3]string{"vm-author", "Update", `{` + tmplF + mediaDisk + `}}}`}),
		},
		{
			name: "bridge annotation owned by someone else",
			mode: apply.ModeAtomic,
			vm:   vmWith(nil, [3]string{"intruder", "Apply", `{"f:metadata":{"f:annotations":{"f:redfish-bridge.io/boot":{}}}}`}),
			want: []Deviation{{Manager: "intruder", Path: `.metadata.annotations.redfish-bridge.io/boot`, Kind: "taken"}},
		},
		{
			// The VM's author names the IPMI port (docs/ipmi.md); the
			// bridge only reads it.
			name: "the author's IPMI port annotation",
			mode: apply.ModeMap,
			vm:   vmWith(nil, [3]string{"vm-author", "Update", `{"f:metadata":{"f:annotations":{"f:redfish-bridge.io/ipmi-port":{}}}}`}),
		},
		{
			name: "map: foreign bootOrder while an override is applied",
			mode: apply.ModeMap,
			vm: vmWith(nil,
				[3]string{apply.ManagerBoot, "Apply", `{` + tmplF + `{"f:domain":{"f:devices":{"f:disks":{"k:{\"name\":\"rootdisk\"}":{"f:bootOrder":{}}}}}}}}}`},
				[3]string{"kubectl-edit", "Update", `{` + tmplF + `{"f:domain":{"f:devices":{"f:interfaces":{"k:{\"name\":\"default\"}":{"f:bootOrder":{}}}}}}}}}`}),
			want: []Deviation{{Manager: "kubectl-edit", Path: `.spec.template.spec.domain.devices.interfaces[name="default"].bootOrder`, Kind: "taken"}},
		},
		{
			name: "author's bootOrder before the bridge wrote",
			mode: apply.ModeMap,
			vm: vmWith(nil, [3]string{"vm-author", "Update",
				`{` + tmplF + `{"f:domain":{"f:devices":{"f:disks":{"k:{\"name\":\"rootdisk\"}":{"f:bootOrder":{}}}}}}}}}`}),
		},
		{
			name: "runStrategy elsewhere on a bridge-written VM is a note",
			mode: apply.ModeAtomic,
			vm: vmWith(nil,
				[3]string{apply.ManagerBoot, "Apply", `{"f:metadata":{"f:annotations":{"f:redfish-bridge.io/boot":{}}}}`},
				[3]string{"kubectl-edit", "Update", `{"f:spec":{"f:runStrategy":{}}}`}),
			notes: 1,
		},
		{
			name: "runStrategy on a VM the bridge never wrote",
			mode: apply.ModeAtomic,
			vm:   vmWith(nil, [3]string{"vm-author", "Update", `{"f:spec":{"f:runStrategy":{}}}`}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Inspect(tc.vm, tc.mode, "flag")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.Deviations, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Deviation{}, "Detail")); diff != "" {
				t.Errorf("deviations (-want +got):\n%s", diff)
			}
			if len(r.Notes) != tc.notes {
				t.Errorf("notes %q, want %d", r.Notes, tc.notes)
			}
		})
	}
}

func TestModeFromManagedFields(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields string
		want   apply.Mode
		ok     bool
	}{
		{"keyed disks", `{` + tmplF + mediaDisk + `}}}`, apply.ModeMap, true},
		{"whole list", `{` + tmplF + `{"f:volumes":{}}}}}`, apply.ModeAtomic, true},
		{"no lists", `{"f:spec":{"f:runStrategy":{}}}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ModeFromManagedFields(vmWith(nil, [3]string{"m", "Update", tc.fields}))
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %q %v, want %q %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestWriteText(t *testing.T) {
	r, err := Inspect(vmWith(nil,
		[3]string{apply.ManagerPower, "Apply", `{"f:spec":{"f:runStrategy":{}}}`},
		[3]string{"intruder", "Apply", `{"f:metadata":{"f:annotations":{"f:redfish-bridge.io/power":{}}}}`}), apply.ModeAtomic, "crd")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `VirtualMachine ns/vm  (list mode: atomic, from crd)

redfish-power  [bridge]  (Apply)
  .spec.runStrategy

intruder  (Apply)
  .metadata.annotations.redfish-bridge.io/power

DEVIATIONS (1):
  taken    intruder owns .metadata.annotations.redfish-bridge.io/power: the redfish-bridge.io/ annotations are the bridge's state
`
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(b.String(), "\n")); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}
