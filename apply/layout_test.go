package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

func TestLayout(t *testing.T) {
	disks := []Device{{Name: "root"}, {Name: "data", BootOrder: 1}, {Name: "media-cd0", CDROM: true}, {Name: "media-cd1", CDROM: true}}
	ifaces := []Device{{Name: "nic0"}, {Name: "nic1", BootOrder: 7}}
	tests := []struct {
		name string
		o    system.BootOverride
		d    Devices
		want BootOrders
	}{
		{"none lays out nothing", system.BootOverride{Target: system.BootNone, Enabled: system.BootOnce}, Devices{disks, ifaces}, BootOrders{}},
		{"disabled lays out nothing", system.BootOverride{Target: system.BootCd, Enabled: system.BootDisabled}, Devices{disks, ifaces}, BootOrders{}},
		{"cd: cdroms first, numbered nic last", system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce}, Devices{disks, ifaces}, BootOrders{
			Disks:      map[string]int64{"media-cd0": 1, "media-cd1": 2, "data": 3, "root": 4},
			Interfaces: map[string]int64{"nic1": 5},
		}},
		{"hdd: disks then cdroms", system.BootOverride{Target: system.BootHdd, Enabled: system.BootContinuous}, Devices{disks, nil}, BootOrders{
			Disks:      map[string]int64{"data": 1, "root": 2, "media-cd0": 3, "media-cd1": 4},
			Interfaces: map[string]int64{},
		}},
		{"pxe: first nic, then disks, then numbered nics", system.BootOverride{Target: system.BootPxe, Enabled: system.BootOnce}, Devices{disks, ifaces}, BootOrders{
			Disks:      map[string]int64{"data": 2, "root": 3, "media-cd0": 4, "media-cd1": 5},
			Interfaces: map[string]int64{"nic0": 1, "nic1": 6},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Layout(tt.o, tt.d)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Layout (-want +got):\n%s", diff)
			}
			if got.Disks == nil {
				return
			}
			seen := map[int64]bool{}
			for _, m := range []map[string]int64{got.Disks, got.Interfaces} {
				for name, n := range m {
					if n <= 0 || seen[n] {
						t.Errorf("%s: bootOrder %d not positive or not unique", name, n)
					}
					seen[n] = true
				}
			}
		})
	}
}

// TestLayoutIdempotent: applying a layout and laying out again changes nothing.
func TestLayoutIdempotent(t *testing.T) {
	o := system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce}
	d := Devices{Disks: []Device{{Name: "root", BootOrder: 5}, {Name: "media-cd0", CDROM: true}, {Name: "b"}}}
	first := Layout(o, d)
	for i := range d.Disks {
		d.Disks[i].BootOrder = first.Disks[d.Disks[i].Name]
	}
	if diff := cmp.Diff(first, Layout(o, d)); diff != "" {
		t.Errorf("second layout differs (-first +second):\n%s", diff)
	}
}
