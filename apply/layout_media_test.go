package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestLayoutUSBAndHTTPBoot: a USB stick is never booted before a disk or a
// CD; the HttpBootUri disk comes first only for target UefiHttp.
func TestLayoutUSBAndHTTPBoot(t *testing.T) {
	disks := []Device{
		{Name: "media-usb0", Removable: true, BootOrder: 1},
		{Name: "media-httpboot", CDROM: true, HTTPBoot: true},
		{Name: "root"},
		{Name: "media-cd0", CDROM: true},
	}
	tests := []struct {
		target system.BootTarget
		want   map[string]int64
	}{
		{system.BootCd, map[string]int64{"media-cd0": 1, "root": 2, "media-usb0": 3, "media-httpboot": 4}},
		{system.BootHdd, map[string]int64{"root": 1, "media-cd0": 2, "media-usb0": 3, "media-httpboot": 4}},
		{system.BootPxe, map[string]int64{"root": 2, "media-cd0": 3, "media-usb0": 4, "media-httpboot": 5}},
		{system.BootUefiHttp, map[string]int64{"media-httpboot": 1, "root": 2, "media-cd0": 3, "media-usb0": 4}},
	}
	for _, tt := range tests {
		t.Run(string(tt.target), func(t *testing.T) {
			got := Layout(system.BootOverride{Target: tt.target, Enabled: system.BootOnce}, Devices{Disks: disks, Interfaces: []Device{{Name: "nic0"}}})
			if diff := cmp.Diff(tt.want, got.Disks); diff != "" {
				t.Errorf("disks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDevicesOfClassifiesMediaDisks: devicesOf tells a USB stick and the
// HttpBootUri disk from CD-ROMs and the author's disks by what BuildMedia
// writes for each slot kind.
func TestDevicesOfClassifiesMediaDisks(t *testing.T) {
	vm := decodeFixture(baseVM(t))
	slots := map[string]system.MediaSlot{}
	for _, id := range []string{"cd0", "usb0", system.HTTPBootSlot} {
		slots[id] = system.MediaSlot{Slot: id, Image: "http://x/" + id, Phase: system.MediaReady, ClaimName: "c-" + id}
	}
	b, err := BuildMedia(ModeAtomic, vm, slots)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Device{}
	for _, d := range devicesOf(b.Object, nil).Disks {
		d.BootOrder = 0
		got[d.Name] = d
	}
	want := map[string]Device{
		"media-cd0":      {Name: "media-cd0", CDROM: true},
		"media-usb0":     {Name: "media-usb0", Removable: true},
		"media-httpboot": {Name: "media-httpboot", CDROM: true, HTTPBoot: true},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, got[name]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	for _, d := range got {
		if _, media := want[d.Name]; !media && (d.Removable || d.HTTPBoot || d.CDROM) {
			t.Errorf("author's disk %s classified as media: %+v", d.Name, d)
		}
	}
}
