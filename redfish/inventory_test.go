package redfish

import (
	"testing"
)

// TestDriveSerialNumber: a disk the VM's spec gives a serial shows it as
// its Drive's SerialNumber (what Ironic's out-of-band inspection records
// and a BareMetalHost's rootDeviceHints.serialNumber matches); a disk
// without one has no SerialNumber at all (not ""), so no hint matches it
// by accident.
func TestDriveSerialNumber(t *testing.T) {
	e := newEnv(t)
	e.fake.mu.Lock()
	v := e.fake.systems["team-a.vm1"]
	v.Disks = []Disk{{Name: "rootdisk", CapacityBytes: 10 << 30}, {Name: "data", CapacityBytes: 20 << 30, Serial: "DATA-0001"}}
	e.fake.bump(v)
	e.fake.mu.Unlock()

	drives := "/redfish/v1/Systems/team-a.vm1/Storage/default/Drives/"
	data := e.get(t, "admin", drives+"data")
	if got := data["SerialNumber"]; got != "DATA-0001" {
		t.Errorf("data drive SerialNumber = %v, want DATA-0001 (%v)", got, data)
	}
	if got := data["CapacityBytes"]; got != float64(20<<30) {
		t.Errorf("data drive CapacityBytes = %v, want %d", got, 20<<30)
	}
	root := e.get(t, "admin", drives+"rootdisk")
	if got, ok := root["SerialNumber"]; ok {
		t.Errorf("rootdisk (no serial in the spec) shows SerialNumber %v", got)
	}
}
