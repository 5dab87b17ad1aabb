package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// withEmptyDrive adds cd0's CD-ROM drive without a volume (what an eject
// leaves).
func withEmptyDrive(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	disks := append(list(u, kubevirt.Disks), mediaDisk("cd0"))
	if err := unstructured.SetNestedSlice(u.Object, toSlice(disks), kubevirt.Disks...); err != nil {
		t.Fatal(err)
	}
	return u
}

// runningVMI is a live VMI of the fixture VM.
func runningVMI() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "vm1", "namespace": "ns1", "uid": "vmi-1"},
		"status":   map[string]any{"phase": "Running"},
	}}
}

// TestBuildMediaHotplug pins the empty drive and the hotpluggable flag
// (build_hotplug.go) in both list modes: what the slot's volume and drive
// look like in the body for each read.
func TestBuildMediaHotplug(t *testing.T) {
	type want struct {
		drive  bool // disk media-cd0 in the body
		volume bool // volume media-cd0 in the body
		hot    bool // and it is hotpluggable
	}
	tests := []struct {
		name  string
		vm    func(t *testing.T) *unstructured.Unstructured
		vmi   bool
		slots map[string]system.MediaSlot
		want  want
	}{
		{"eject keeps the drive, running", func(t *testing.T) *unstructured.Unstructured { return withCD(t, baseVM(t), 0) }, true,
			map[string]system.MediaSlot{}, want{drive: true}},
		{"eject keeps the drive, stopped", func(t *testing.T) *unstructured.Unstructured { return withCD(t, baseVM(t), 0) }, false,
			map[string]system.MediaSlot{}, want{drive: true}},
		{"importing keeps the empty drive", withEmptyDriveOf, true,
			map[string]system.MediaSlot{"cd0": {Slot: "cd0", Image: "http://i/x.iso", Phase: system.MediaImporting, InsertID: "i-2", ClaimName: "vm1-cd0-i-2"}}, want{drive: true}},
		{"ready into the drive of a running VM: hotpluggable", withEmptyDriveOf, true,
			map[string]system.MediaSlot{"cd0": readySlot()}, want{drive: true, volume: true, hot: true}},
		{"ready into the drive of a stopped VM: plain", withEmptyDriveOf, false,
			map[string]system.MediaSlot{"cd0": readySlot()}, want{drive: true, volume: true}},
		{"ready into a running VM without the drive: plain", baseVM, true,
			map[string]system.MediaSlot{"cd0": readySlot()}, want{drive: true, volume: true}},
		{"a plain volume stays plain once running", func(t *testing.T) *unstructured.Unstructured { return withCD(t, baseVM(t), 0) }, true,
			map[string]system.MediaSlot{"cd0": readySlot()}, want{drive: true, volume: true}},
		{"a hotplugged volume stays hotpluggable once stopped", withHotCD, false,
			map[string]system.MediaSlot{"cd0": readySlot()}, want{drive: true, volume: true, hot: true}},
		{"the HttpBootUri drive goes with its volume", withHTTPBootDrive, true,
			map[string]system.MediaSlot{}, want{}},
		{"nothing before the first insert", baseVM, true,
			map[string]system.MediaSlot{}, want{}},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{ModeMap, ModeAtomic} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				vm := decodeFixture(tt.vm(t))
				if tt.vmi {
					vm.VMI = runningVMI()
				}
				b, err := BuildMedia(mode, vm, tt.slots)
				if err != nil {
					t.Fatalf("BuildMedia: %v", err)
				}
				// Atomic mode sends no list that stays as read.
				result := b.Object
				if _, sent := kubevirt.MapAt(b.Object.Object, kubevirt.TemplateSpec...)["domain"]; mode == ModeAtomic && !sent {
					result = vm.Object
				}
				if hasDrive(&VM{Object: result}, system.HTTPBootSlot) {
					t.Errorf("the HttpBootUri slot's empty drive was kept: %v", b.Object.Object)
				}
				var got want
				got.drive = hasDrive(&VM{Object: result}, "cd0")
				for _, v := range list(result, kubevirt.Volumes) {
					if kubevirt.NameOf(v) == DiskName("cd0") {
						got.volume = true
						got.hot, _ = kubevirt.MapAt(v, kubevirt.VolumeClaim[0])[kubevirt.VolumeClaimHotpluggable[1]].(bool)
					}
				}
				if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
					t.Errorf("body %v (-want +got):\n%s", b.Object.Object, diff)
				}
			})
		}
	}
}

func withEmptyDriveOf(t *testing.T) *unstructured.Unstructured { return withEmptyDrive(t, baseVM(t)) }

// withHotCD is withCD with the volume hotpluggable.
func withHotCD(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := withCD(t, baseVM(t), 0)
	vols := list(u, kubevirt.Volumes)
	for _, v := range vols {
		if kubevirt.NameOf(v) == DiskName("cd0") {
			v[kubevirt.VolumeClaim[0]].(map[string]any)[kubevirt.VolumeClaimHotpluggable[1]] = true
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, toSlice(vols), kubevirt.Volumes...); err != nil {
		t.Fatal(err)
	}
	return u
}

// withHTTPBootDrive adds the HttpBootUri slot's CD-ROM disk without a
// volume (what a stale read may show): it is never kept.
func withHTTPBootDrive(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := baseVM(t)
	d := mediaDisk(system.HTTPBootSlot)
	disks := append(list(u, kubevirt.Disks), d)
	if err := unstructured.SetNestedSlice(u.Object, toSlice(disks), kubevirt.Disks...); err != nil {
		t.Fatal(err)
	}
	return u
}
