package redfish

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// setDevices gives a fake system disks and interfaces (and their
// bootOrders), as a write to its VM spec would.
func (f *fake) setDevices(id string, disks []Disk, nics []NIC, slots ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.systems[id]
	v.Disks, v.NICs = disks, nics
	for _, s := range slots {
		v.Slots = append(v.Slots, system.MediaSlot{Slot: s})
	}
	f.bump(v)
}

// TestBootOptions: every disk and interface of the VM is a BootOption
// with the Alias its kind boots as, and Boot.BootOrder lists the options
// with a bootOrder in the VM spec, lowest first; BootOrder is read-only
// (PropertyNotWritable, nothing written), and the resources are confined
// to the caller's scope.
func TestBootOptions(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	const sys = "/redfish/v1/Systems/team-a.vm1"
	e.fake.setDevices("team-a.vm1", []Disk{
		{Name: "rootdisk", BootOrder: 2, CapacityBytes: 10 << 30},
		{Name: "media-cd0", CDROM: true, Slot: "cd0", BootOrder: 1},
		{Name: "media-usb0", Slot: "usb0"},
		{Name: "media-httpboot", CDROM: true, Slot: system.HTTPBootSlot},
		{Name: "installer", CDROM: true},
	}, []NIC{{Name: "default", MAC: "52:54:00:00:00:01", BootOrder: 3}, {Name: "storage"}}, "usb0")

	body := checkServed(t, e, v, sys, "PATCH", map[string]any{})
	boot := body["Boot"].(map[string]any)
	want := []any{"disk-media-cd0", "disk-rootdisk", "nic-default"}
	if diff := cmp.Diff(want, boot["BootOrder"]); diff != "" {
		t.Errorf("Boot.BootOrder (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"@odata.id": sys + "/BootOptions"}, boot["BootOptions"]); diff != "" {
		t.Errorf("Boot.BootOptions (-want +got):\n%s", diff)
	}

	options := []struct {
		id, alias, display, related string
	}{
		{"disk-rootdisk", "Hdd", "Disk rootdisk", sys + "/Storage/default/Drives/rootdisk"},
		{"disk-media-cd0", "Cd", "Virtual CD cd0", sys + "/VirtualMedia/cd0"},
		{"disk-media-usb0", "Usb", "Virtual USB stick usb0", sys + "/VirtualMedia/usb0"},
		{"disk-media-httpboot", "UefiHttp", "UEFI HTTP boot image (Boot.HttpBootUri)", ""},
		{"disk-installer", "Cd", "CD-ROM installer", ""},
		{"nic-default", "Pxe", "Network interface default", sys + "/EthernetInterfaces/default"},
		{"nic-storage", "Pxe", "Network interface storage", sys + "/EthernetInterfaces/storage"},
	}
	var members []any
	for _, o := range options {
		members = append(members, map[string]any{"@odata.id": sys + "/BootOptions/" + o.id})
	}
	checkServed(t, e, v, sys+"/BootOptions", "", map[string]any{"Members": members, "Members@odata.count": float64(len(members))})
	for _, o := range options {
		t.Run(o.id, func(t *testing.T) {
			want := map[string]any{"Id": o.id, "BootOptionReference": o.id, "Alias": o.alias, "DisplayName": o.display, "RelatedItem": nil}
			if o.related != "" {
				want["RelatedItem"] = []any{map[string]any{"@odata.id": o.related}}
			}
			checkServed(t, e, v, sys+"/BootOptions/"+o.id, "", want)
		})
	}

	for _, sub := range []string{"/BootOptions", "/BootOptions/disk-rootdisk"} {
		checkScoped(t, e, "/redfish/v1/Systems/", sub)
	}
	if rec := e.do(t, req{path: sys + "/BootOptions/disk-nothere", user: "admin"}); rec.Code != http.StatusNotFound {
		t.Errorf("GET an unknown BootOption: %d", rec.Code)
	}

	rec := e.do(t, req{method: http.MethodPatch, path: sys, user: "admin", body: `{"Boot":{"BootOrder":["nic-default"]}}`})
	wantErr := errorInfo{Status: http.StatusBadRequest, IDs: []string{"PropertyNotWritable"}, Related: []string{"#/Boot/BootOrder"}}
	if diff := cmp.Diff(wantErr, errInfo(t, rec)); diff != "" {
		t.Errorf("PATCH Boot.BootOrder (-want +got):\n%s", diff)
	}
	if calls := e.fake.takeCalls(); len(calls) != 0 {
		t.Errorf("PATCH Boot.BootOrder wrote: %v", calls)
	}
}
