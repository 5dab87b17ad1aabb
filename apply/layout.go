package apply

import (
	"cmp"
	"slices"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Device is one disk or interface as Layout sees it.
type Device struct {
	Name      string
	CDROM     bool  // disks only: has a cdrom target
	BootOrder int64 // as read; 0 when unset
	// Removable is a virtual-media disk that is not a CD-ROM (a USB stick).
	Removable bool
	// HTTPBoot is the disk of the Boot.HttpBootUri image.
	HTTPBoot bool
}

// Devices is the input of Layout, in the VM's list order.
type Devices struct {
	Disks      []Device
	Interfaces []Device
}

// BootOrders is a computed layout: bootOrder by disk and by interface name.
// Both maps are nil when the override lays out nothing.
type BootOrders struct {
	Disks      map[string]int64
	Interfaces map[string]int64
}

// Active reports whether an override lays out boot orders: it is pending
// (Once or Continuous) and targets Cd, Hdd, Pxe or UefiHttp.
func Active(o system.BootOverride) bool {
	return o.Pending() && system.In(o.Target, []system.BootTarget{system.BootCd, system.BootHdd, system.BootPxe, system.BootUefiHttp})
}

// Layout computes every device's bootOrder for an override:
//
//   - Cd: CD-ROM disks first (1, 2, ...), then the other disks;
//   - Hdd: the other disks first, then CD-ROM disks;
//   - Pxe: the first interface gets 1, then disks as for Hdd;
//   - UefiHttp: the Boot.HttpBootUri image's disk first, then as for Hdd;
//   - None, Disabled, or no target: no layout (boot releases its fields).
//
// USB stick disks come after every other disk (a configuration stick is
// never booted), and the HttpBootUri disk after them unless the target is
// UefiHttp.
//
// Interfaces other than the PXE one that carry a bootOrder are numbered
// after every disk, so orders stay unique across disks and interfaces.
// Within a group devices keep their current relative order (bootOrder,
// then list order), so Layout is idempotent. All orders are > 0.
func Layout(o system.BootOverride, d Devices) BootOrders {
	if !Active(o) {
		return BootOrders{}
	}
	out := BootOrders{Disks: map[string]int64{}, Interfaces: map[string]int64{}}
	next := int64(1)
	assign := func(m map[string]int64, devs []Device) {
		for _, dev := range sortedByOrder(devs) {
			m[dev.Name] = next
			next++
		}
	}
	var cds, others, removable, httpBoot []Device
	for _, disk := range d.Disks {
		switch {
		case disk.HTTPBoot:
			httpBoot = append(httpBoot, disk)
		case disk.Removable:
			removable = append(removable, disk)
		case disk.CDROM:
			cds = append(cds, disk)
		default:
			others = append(others, disk)
		}
	}
	ifaces := d.Interfaces
	if o.Target == system.BootPxe && len(ifaces) > 0 {
		assign(out.Interfaces, ifaces[:1])
		ifaces = ifaces[1:]
	}
	switch o.Target {
	case system.BootCd:
		assign(out.Disks, cds)
		assign(out.Disks, others)
	case system.BootUefiHttp:
		assign(out.Disks, httpBoot)
		httpBoot = nil
		fallthrough
	default:
		assign(out.Disks, others)
		assign(out.Disks, cds)
	}
	assign(out.Disks, removable)
	assign(out.Disks, httpBoot)
	var numbered []Device
	for _, i := range ifaces {
		if i.BootOrder > 0 {
			numbered = append(numbered, i)
		}
	}
	assign(out.Interfaces, numbered)
	return out
}

// sortedByOrder returns devs with those carrying a bootOrder first, by
// bootOrder, then the rest in list order.
func sortedByOrder(devs []Device) []Device {
	out := slices.Clone(devs)
	slices.SortStableFunc(out, func(a, b Device) int {
		switch {
		case a.BootOrder > 0 && b.BootOrder > 0:
			return cmp.Compare(a.BootOrder, b.BootOrder)
		case a.BootOrder > 0:
			return -1
		case b.BootOrder > 0:
			return 1
		}
		return 0
	})
	return out
}

// Settled reports whether the VM's boot orders are what its recorded
// override lays out (always true when the override lays out nothing).
func Settled(vm *VM) bool {
	want := Layout(vm.Boot, devicesOf(vm.Object, nil))
	if want.Disks == nil {
		return true
	}
	d := devicesOf(vm.Object, nil)
	for _, disk := range d.Disks {
		if want.Disks[disk.Name] != disk.BootOrder {
			return false
		}
	}
	for _, i := range d.Interfaces {
		if w, ok := want.Interfaces[i.Name]; ok && w != i.BootOrder {
			return false
		}
	}
	return true
}
