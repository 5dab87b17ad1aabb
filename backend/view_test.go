package backend

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestViewBootDevices: a System's view carries each disk's and interface's
// bootOrder from the VM spec and the media slot a "media-<slot>" disk
// holds, what its BootOptions and Boot.BootOrder show.
func TestViewBootDevices(t *testing.T) {
	obj := testutil.VM("team-a", "vm1", "Halted")
	devices := []string{"spec", "template", "spec", "domain", "devices"}
	if err := unstructured.SetNestedSlice(obj.Object, []any{
		map[string]any{"name": "rootdisk", "disk": map[string]any{"bus": "virtio"}, "bootOrder": int64(2)},
		map[string]any{"name": apply.DiskName("cd0"), "cdrom": map[string]any{"bus": "sata"}, "bootOrder": int64(1)},
		map[string]any{"name": apply.DiskName("usb0"), "disk": map[string]any{"bus": "usb"}},
	}, append(devices, "disks")...); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(obj.Object, []any{
		map[string]any{"name": "default", "masquerade": map[string]any{}, "bootOrder": int64(3)},
	}, append(devices, "interfaces")...); err != nil {
		t.Fatal(err)
	}
	key := system.Key{Namespace: "team-a", Name: "vm1"}
	v := View(apply.Decode(t.Context(), key, obj, nil), []string{"cd0", "usb0"}, nil)
	want := []redfish.Disk{
		{Name: "rootdisk", BootOrder: 2},
		{Name: "media-cd0", CDROM: true, BootOrder: 1, Slot: "cd0"},
		{Name: "media-usb0", Slot: "usb0"},
	}
	if diff := cmp.Diff(want, v.Disks); diff != "" {
		t.Errorf("Disks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]redfish.NIC{{Name: "default", BootOrder: 3}}, v.NICs); diff != "" {
		t.Errorf("NICs (-want +got):\n%s", diff)
	}
}
