package kubevirt

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object(t *testing.T, fields map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for path, v := range fields {
		if err := unstructured.SetNestedField(u.Object, v, splitDots(path)...); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// TestSpecReaders: disks, interfaces and volumes as the bridge shows and
// lays them out; JSON numbers (float64) and int64 read alike, malformed
// entries read as zero values.
func TestSpecReaders(t *testing.T) {
	vm := object(t, map[string]any{
		Disks.String(): []any{
			map[string]any{"name": "root", "disk": map[string]any{"bus": "virtio"}, "bootOrder": int64(2), "serial": "ROOT-1"},
			map[string]any{"name": "media-cd0", "cdrom": map[string]any{}, "bootOrder": float64(1)},
			"not an object",
		},
		Interfaces.String(): []any{map[string]any{"name": "default", "macAddress": "02:00:00:00:00:01", "bootOrder": int64(3)}},
		Volumes.String(): []any{
			map[string]any{"name": "root", "persistentVolumeClaim": map[string]any{"claimName": "root-pvc"}},
			map[string]any{"name": "dv", "dataVolume": map[string]any{"name": "dv1"}},
			map[string]any{"name": "scratch", "emptyDisk": map[string]any{"capacity": "1Gi"}},
		},
		TemplateSpec.Child(SpecCPU...).Child("cores").String(): int64(4),
		TemplateSpec.Child(SpecGuestMemory...).String():        "2Gi",
	})
	if diff := cmp.Diff([]Disk{{Name: "root", BootOrder: 2, Serial: "ROOT-1"}, {Name: "media-cd0", BootOrder: 1, CDROM: true}}, DisksOf(vm)); diff != "" {
		t.Errorf("DisksOf (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Interface{{Name: "default", BootOrder: 3, MAC: "02:00:00:00:00:01"}}, InterfacesOf(vm)); diff != "" {
		t.Errorf("InterfacesOf (-want +got):\n%s", diff)
	}
	wantVols := []Volume{{Name: "root", Claim: "root-pvc"}, {Name: "dv", DataVolume: "dv1"}, {Name: "scratch", EmptyDisk: "1Gi"}}
	if diff := cmp.Diff(wantVols, VolumesOf(vm)); diff != "" {
		t.Errorf("VolumesOf (-want +got):\n%s", diff)
	}
	if got, want := SpecCPUOf(TemplateSpecOf(vm)), (CPU{Sockets: 1, Cores: 4, Threads: 1}); got != want {
		t.Errorf("SpecCPUOf = %+v, want %+v", got, want)
	}
	if got := SpecMemoryOf(TemplateSpecOf(vm)); got != 2<<30 {
		t.Errorf("SpecMemoryOf = %d, want 2Gi", got)
	}
	empty := object(t, nil)
	if DisksOf(empty) != nil || SpecMemoryOf(TemplateSpecOf(empty)) != 0 || RunStrategyOf(empty) != "" {
		t.Errorf("an empty VM reads non-zero")
	}
}

// TestFirmware: what the VM boots, as KubeVirt decides it from the spec.
func TestFirmware(t *testing.T) {
	tests := []struct {
		name       string
		loader     map[string]any
		wantEFI    bool
		wantSecure bool
	}{
		{name: "no bootloader boots BIOS", wantEFI: false},
		{name: "bios", loader: map[string]any{"bios": map[string]any{}}, wantEFI: false},
		{name: "efi: Secure Boot by default", loader: map[string]any{"efi": map[string]any{}}, wantEFI: true, wantSecure: true},
		{name: "efi secureBoot false", loader: map[string]any{"efi": map[string]any{"secureBoot": false}}, wantEFI: true},
		{name: "efi and bios: efi wins", loader: map[string]any{"efi": map[string]any{"secureBoot": false}, "bios": map[string]any{}}, wantEFI: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := object(t, nil)
			if tt.loader != nil {
				vm = object(t, map[string]any{Bootloader.String(): tt.loader})
			}
			efi, secure := Firmware(vm)
			if efi != tt.wantEFI || secure != tt.wantSecure {
				t.Errorf("Firmware = efi %v, secure boot %v; want %v, %v", efi, secure, tt.wantEFI, tt.wantSecure)
			}
		})
	}
}

// TestVMIReaders: phase, final and live, conditions, phase times and MACs.
func TestVMIReaders(t *testing.T) {
	at := "2026-12-03T10:00:00Z"
	vmi := object(t, map[string]any{
		VMIPhase.String(): string(PhaseRunning),
		VMIConditions.String(): []any{map[string]any{"type": ConditionPaused, "status": "True", "reason": ReasonPausedIOError,
			"lastTransitionTime": at}},
		VMIPhaseTransitions.String(): []any{
			map[string]any{"phase": "Running", "phaseTransitionTimestamp": "2026-12-03T09:00:00Z"},
			map[string]any{"phase": "Running", "phaseTransitionTimestamp": at},
		},
		VMIInterfaces.String(): []any{map[string]any{"name": "default", "mac": "02:00:00:00:00:02"}},
	})
	if PhaseOf(vmi) != PhaseRunning || Final(vmi) || !Live(vmi) {
		t.Errorf("Running VMI: phase %q final %v live %v", PhaseOf(vmi), Final(vmi), Live(vmi))
	}
	want, _ := time.Parse(time.RFC3339, at)
	if c := VMIConditionOf(vmi, ConditionPaused); !c.True() || c.Reason != ReasonPausedIOError || !c.LastTransitionTime.Equal(want) {
		t.Errorf("Paused condition = %+v", c)
	}
	if got := PhaseTimeOf(vmi, PhaseRunning); !got.Equal(want) {
		t.Errorf("PhaseTimeOf = %s, want the latest %s", got, want)
	}
	if diff := cmp.Diff(map[string]string{"default": "02:00:00:00:00:02"}, MACsOf(vmi)); diff != "" {
		t.Errorf("MACsOf (-want +got):\n%s", diff)
	}
	if PhaseOf(nil) != PhaseUnset || Live(nil) || VMIConditionOf(nil, ConditionPaused).True() {
		t.Errorf("a nil VMI reads as present")
	}
	for _, p := range []Phase{PhaseSucceeded, PhaseFailed} {
		if v := object(t, map[string]any{VMIPhase.String(): string(p)}); !Final(v) || Live(v) {
			t.Errorf("%s VMI: final %v live %v", p, Final(v), Live(v))
		}
	}
	deleting := object(t, map[string]any{VMIPhase.String(): string(PhaseRunning)})
	deleting.SetDeletionTimestamp(&metav1.Time{Time: want})
	if Live(deleting) {
		t.Errorf("a VMI being deleted reads live")
	}
}

// TestStateChangeRequests: decoding and encoding round-trip; a Start
// carries no uid.
func TestStateChangeRequests(t *testing.T) {
	reqs := []StateChangeRequest{{Action: StopRequest, UID: "vmi-1"}, {Action: StartRequest}}
	vm := object(t, map[string]any{StateChangeRequests.String(): EncodeStateChangeRequests(reqs)})
	if diff := cmp.Diff(reqs, StateChangeRequestsOf(vm)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, has := EncodeStateChangeRequests(reqs)[1].(map[string]any)[KeyUID]; has {
		t.Errorf("a Start request carries a uid")
	}
}
