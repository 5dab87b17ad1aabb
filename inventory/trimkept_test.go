package inventory

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// vmiReads is everything the bridge reads of a cached VMI.
type vmiReads struct {
	Name, Namespace, UID, ResourceVersion string
	Deleting                              *metav1.Time
	Phase                                 kubevirt.Phase
	Final, Live                           bool
	Conditions                            map[string]kubevirt.Condition
	PhaseTimes                            map[kubevirt.Phase]time.Time
	MACs                                  map[string]string
	RebootPolicy, UUID                    string
	EFI                                   bool
	SecureBoot                            bool
}

func readsOf(vmi *unstructured.Unstructured) vmiReads {
	r := vmiReads{
		Name: vmi.GetName(), Namespace: vmi.GetNamespace(), UID: string(vmi.GetUID()), ResourceVersion: vmi.GetResourceVersion(),
		Deleting: vmi.GetDeletionTimestamp(), Phase: kubevirt.PhaseOf(vmi), Final: kubevirt.Final(vmi), Live: kubevirt.Live(vmi),
		Conditions: map[string]kubevirt.Condition{}, PhaseTimes: map[kubevirt.Phase]time.Time{},
		MACs: kubevirt.MACsOf(vmi), RebootPolicy: kubevirt.VMIRebootPolicyOf(vmi),
		UUID: kubevirt.StringAt(vmi.Object, kubevirt.VMIFirmwareUUID...),
	}
	for _, c := range []string{kubevirt.ConditionPaused, kubevirt.ConditionAgentConnected, "Ready"} {
		r.Conditions[c] = kubevirt.VMIConditionOf(vmi, c)
	}
	for _, p := range []kubevirt.Phase{kubevirt.PhaseRunning, kubevirt.PhaseFailed, kubevirt.PhaseSucceeded, "Scheduling", "Scheduled", "Pending"} {
		r.PhaseTimes[p] = kubevirt.PhaseTimeOf(vmi, p)
	}
	r.EFI, r.SecureBoot = kubevirt.VMIFirmware(vmi)
	return r
}

// TestTrimVMIKeepsWhatIsRead checks that every reader of a cached VMI
// answers the same on the compact VMI as on the whole one (a real running
// VMI of the demo, and variants), and that the compact VMI holds nothing
// else.
func TestTrimVMIKeepsWhatIsRead(t *testing.T) {
	fixture := testdataObject(t, "vmi.json")
	tests := []struct {
		name string
		edit func(u *unstructured.Unstructured)
	}{
		{"running, as virt-controller and the node leave it", func(*unstructured.Unstructured) {}},
		{"agent connected, paused on I/O error, UEFI reboot policy", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{
				map[string]any{"type": "AgentConnected", "status": "True", "lastTransitionTime": "2026-12-05T03:16:00Z"},
				map[string]any{"type": "Paused", "status": "True", "reason": "PausedIOError", "lastTransitionTime": "2026-12-05T03:17:00Z"},
			}, kubevirt.VMIConditions...)
			_ = unstructured.SetNestedField(u.Object, "Terminate", kubevirt.VMIRebootPolicy...)
			_ = unstructured.SetNestedField(u.Object, map[string]any{"secureBoot": true}, kubevirt.VMIEFI...)
		}},
		{"failed, being deleted", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "Failed", kubevirt.VMIPhase...)
			u.SetDeletionTimestamp(&metav1.Time{Time: time.Date(2026, 12, 5, 3, 20, 0, 0, time.UTC)})
		}},
		{"legacy BIOS, no status yet", func(u *unstructured.Unstructured) {
			delete(u.Object, "status")
			_ = unstructured.SetNestedField(u.Object, map[string]any{"bios": map[string]any{}}, kubevirt.VMIBootloader...)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := fixture(t)
			tt.edit(whole)
			want := readsOf(whole)
			in := fixture(t)
			tt.edit(in)
			got, err := trimVMI(in)
			if err != nil {
				t.Fatal(err)
			}
			trimmed, err := got.(*packedObject).Object()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, readsOf(trimmed)); diff != "" {
				t.Errorf("reads of the cached VMI differ (-whole +cached):\n%s", diff)
			}
			for _, gone := range [][]string{{"metadata", "labels"}, {"metadata", "annotations"}, {"metadata", "ownerReferences"},
				{"metadata", "managedFields"}, {"spec", "domain", "devices"}, {"status", "volumeStatus"}} {
				if _, found, _ := unstructured.NestedFieldNoCopy(trimmed.Object, gone...); found {
					t.Errorf("cached VMI keeps %v", gone)
				}
			}
			for _, i := range kubevirt.SliceAt(trimmed.Object, kubevirt.VMIInterfaces...) {
				for k := range i.(map[string]any) {
					if k != kubevirt.KeyName && k != kubevirt.VMIInterfaceMAC {
						t.Errorf("cached VMI interface keeps %q", k)
					}
				}
			}
		})
	}
}

// TestTrimPVCKeepsWhatIsRead checks that a cached PVC (the demo's image
// PVC, and variants) answers what a System's disk size reads, its identity
// and phase, and holds nothing else.
func TestTrimPVCKeepsWhatIsRead(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "pvc.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(p *corev1.PersistentVolumeClaim)
	}{
		{"pending, as the bridge creates it", func(*corev1.PersistentVolumeClaim) {}},
		{"bound, with a capacity", func(p *corev1.PersistentVolumeClaim) {
			p.Status.Phase = corev1.ClaimBound
			p.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}
		}},
		{"being deleted", func(p *corev1.PersistentVolumeClaim) {
			p.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 12, 5, 3, 20, 0, 0, time.UTC)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := decodePVC(raw)
			if err != nil {
				t.Fatal(err)
			}
			whole := o.(*corev1.PersistentVolumeClaim)
			tt.edit(whole)
			want := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
				Name: whole.Name, Namespace: whole.Namespace, UID: whole.UID, ResourceVersion: whole.ResourceVersion,
				DeletionTimestamp: whole.DeletionTimestamp,
			}}
			want.Status.Phase = whole.Status.Phase
			want.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: whole.Spec.Resources.Requests[corev1.ResourceStorage]}
			if q, ok := whole.Status.Capacity[corev1.ResourceStorage]; ok {
				want.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: q}
			}
			got, err := trimPVC(whole.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got.(*cachedPVC).PVC()); diff != "" {
				t.Errorf("cached PVC (-want +got):\n%s", diff)
			}
		})
	}
}

// testdataObject reads testdata/name once and returns a function decoding
// a fresh copy of it for each use.
func testdataObject(t *testing.T, name string) func(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return func(t *testing.T) *unstructured.Unstructured {
		t.Helper()
		o, err := decodeUnstructured(raw)
		if err != nil {
			t.Fatal(err)
		}
		return o.(*unstructured.Unstructured)
	}
}
