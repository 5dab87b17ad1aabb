package inventory

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// vmReads is everything the bridge reads of a cached VM (the Writer's
// ownership decisions aside: apply's TestCompactVMBuildsSameBodies).
type vmReads struct {
	Name, Namespace, UID, ResourceVersion, Revision string
	Deleting                                        *metav1.Time
	Labels                                          map[string]string
	Slots                                           map[string]system.MediaSlot
	Boot                                            system.BootOverride
	Power                                           system.PowerIntent
	Disks                                           []kubevirt.Disk
	Interfaces                                      []kubevirt.Interface
	Volumes                                         []kubevirt.Volume
	// DisksList, InterfacesList and VolumesList are the lists whole: in
	// atomic mode the Writer re-applies them as read.
	DisksList, InterfacesList, VolumesList []any
	CPU                                    kubevirt.CPU
	Memory                                 int64
	RunStrategy                            kubevirt.RunStrategyValue
	RebootPolicy, UUID                     string
	Status                                 kubevirt.Status
	StateChanges                           []kubevirt.StateChangeRequest
	Conditions                             map[string]kubevirt.Condition
	EFI                                    bool
	SecureBoot                             bool
}

func vmReadsOf(t *testing.T, u *unstructured.Unstructured) vmReads {
	t.Helper()
	key := system.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
	vm := apply.Decode(t.Context(), key, u, nil)
	spec := kubevirt.TemplateSpecOf(u)
	r := vmReads{
		Name: u.GetName(), Namespace: u.GetNamespace(), UID: string(u.GetUID()), ResourceVersion: u.GetResourceVersion(),
		Revision: vm.Revision(), Deleting: u.GetDeletionTimestamp(), Labels: u.GetLabels(),
		Slots: vm.Slots, Boot: vm.Boot, Power: vm.Power,
		Disks: kubevirt.DisksOf(u), Interfaces: kubevirt.InterfacesOf(u), Volumes: kubevirt.VolumesOf(u),
		DisksList: kubevirt.SliceAt(u.Object, kubevirt.Disks...), InterfacesList: kubevirt.SliceAt(u.Object, kubevirt.Interfaces...),
		VolumesList: kubevirt.SliceAt(u.Object, kubevirt.Volumes...),
		CPU:         kubevirt.SpecCPUOf(spec), Memory: kubevirt.SpecMemoryOf(spec),
		RunStrategy: kubevirt.RunStrategyOf(u), RebootPolicy: kubevirt.RebootPolicyOf(u), UUID: kubevirt.FirmwareUUIDOf(u, nil),
		Status: kubevirt.PrintableStatusOf(u), StateChanges: kubevirt.StateChangeRequestsOf(u),
		Conditions: map[string]kubevirt.Condition{},
	}
	for _, c := range []string{kubevirt.ConditionFailure, kubevirt.ConditionRestartRequired} {
		r.Conditions[c] = kubevirt.VMConditionOf(u, c)
	}
	r.EFI, r.SecureBoot = kubevirt.Firmware(u)
	return r
}

// TestTrimVMKeepsWhatIsRead checks that every reader of a cached VM
// answers the same on the compact VM as on the whole one (vm-0 of the
// demo, and variants), that the whole disks, interfaces and volumes lists
// are kept, and that the compact VM holds nothing else.
func TestTrimVMKeepsWhatIsRead(t *testing.T) {
	fixture := testdataObject(t, "vm.json")
	set := func(u *unstructured.Unstructured, v any, p kubevirt.Path) {
		if err := unstructured.SetNestedField(u.Object, v, p...); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		edit func(u *unstructured.Unstructured)
	}{
		{"running with a CD inserted, as the demo leaves it", func(*unstructured.Unstructured) {}},
		{"boot override, power intent, boot orders, a stop pending, failed", func(u *unstructured.Unstructured) {
			a := u.GetAnnotations()
			a[apply.AnnotationBoot] = `{"target":"Cd","enabled":"Once","mode":"UEFI","secureBoot":"Enabled","armedVMI":"u-1"}`
			a[apply.AnnotationPower] = `{"onDeferred":true}`
			u.SetAnnotations(a)
			set(u, []any{
				map[string]any{"name": "rootdisk", "bootOrder": int64(2), "disk": map[string]any{"bus": "virtio"}},
				map[string]any{"name": "media-cd0", "bootOrder": int64(1), "cdrom": map[string]any{"bus": "sata", "readonly": true}},
			}, kubevirt.Disks)
			set(u, "Terminate", kubevirt.RebootPolicy)
			set(u, map[string]any{"secureBoot": true}, kubevirt.EFI)
			set(u, []any{map[string]any{"action": "Stop", "uid": "u-1"}, map[string]any{"action": "Start"}}, kubevirt.StateChangeRequests)
			set(u, "CrashLoopBackOff", kubevirt.PrintableStatus)
			set(u, append(kubevirt.SliceAt(u.Object, kubevirt.VMConditions...),
				map[string]any{"type": "Failure", "status": "True", "reason": "FailedCreate", "lastTransitionTime": "2026-12-05T03:16:00Z", "message": "m"}),
				kubevirt.VMConditions)
		}},
		{"legacy BIOS, data volume, memory as a request, no status yet, being deleted", func(u *unstructured.Unstructured) {
			delete(u.Object, "status")
			set(u, map[string]any{"bios": map[string]any{}}, kubevirt.Bootloader)
			set(u, []any{map[string]any{"name": "rootdisk", "dataVolume": map[string]any{"name": "vm-0-root"}}}, kubevirt.Volumes)
			domain := kubevirt.TemplateSpec.Child("domain")
			unstructured.RemoveNestedField(u.Object, domain.Child("memory")...)
			set(u, map[string]any{"requests": map[string]any{"memory": "2Gi"}}, domain.Child("resources"))
			u.SetDeletionTimestamp(&metav1.Time{Time: time.Date(2026, 12, 5, 3, 20, 0, 0, time.UTC)})
		}},
		{"no firmware uuid, no annotations, no labels", func(u *unstructured.Unstructured) {
			unstructured.RemoveNestedField(u.Object, kubevirt.FirmwareUUID...)
			u.SetAnnotations(nil)
			u.SetLabels(nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := fixture(t)
			tt.edit(whole)
			want := vmReadsOf(t, whole)
			in := fixture(t)
			tt.edit(in)
			trimmed, owners := CompactVM(in)
			if diff := cmp.Diff(want, vmReadsOf(t, trimmed)); diff != "" {
				t.Errorf("reads of the cached VM differ (-whole +cached):\n%s", diff)
			}
			if len(owners) == 0 {
				t.Error("no managedFields kept for the Writer")
			}
			for _, gone := range [][]string{{"metadata", "managedFields"}, {"metadata", "finalizers"}, {"metadata", "generation"},
				{"metadata", "annotations", "kubevirt.io/latest-observed-api-version"}, {"spec", "template", "metadata"},
				{"spec", "template", "spec", "networks"}, {"status", "volumeSnapshotStatuses"}, {"status", "ready"}} {
				if _, found, _ := unstructured.NestedFieldNoCopy(trimmed.Object, gone...); found {
					t.Errorf("cached VM keeps %v", gone)
				}
			}
			for _, c := range kubevirt.SliceAt(trimmed.Object, kubevirt.VMConditions...) {
				if typ := c.(map[string]any)["type"]; typ != kubevirt.ConditionFailure && typ != kubevirt.ConditionRestartRequired {
					t.Errorf("cached VM keeps condition %v", typ)
				}
				if _, ok := c.(map[string]any)["message"]; ok {
					t.Error("cached VM condition keeps its message")
				}
			}
		})
	}
}
