package redfish

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Boot options are the VM's disks and network interfaces, each a device
// KubeVirt can boot, and Boot.BootOrder is their bootOrder in the VM spec:
// the options of the devices that have one, lowest first. KubeVirt tries
// only those when any has one; with none, the firmware's own order applies
// and BootOrder is empty. An option's id and BootOptionReference name the
// device ("disk-<name>", "nic-<name>"), not a UEFI Boot#### variable
// (OVMF numbers those itself, unseen by the bridge), so they stay the same
// while disks come and go.
//
// BootOrder is read-only: writing it would mean redfish-boot owning every
// bootOrder without an override set, and on stock KubeVirt (atomic lists)
// that is the whole disks and interfaces lists, permanently (apply/doc.go).
// The boot override (BootSourceOverrideTarget) is the writable way to
// choose what boots.

// bootOption is one bootable device of a system.
type bootOption struct {
	id, name string
	order    int64
	alias    system.BootTarget // a ComputerSystem BootSource
	related  string            // the resource of the device, "" for none
	display  string
}

// bootOptions lists v's boot options: disks in spec order, then
// interfaces.
func bootOptions(v SystemView) []bootOption {
	uri := systemURI(v)
	var out []bootOption
	for _, d := range v.Disks {
		o := bootOption{id: "disk-" + d.Name, name: d.Name, order: d.BootOrder}
		switch kind := system.KindOf(d.Slot); {
		case d.Slot != "" && kind == system.SlotHTTPBoot:
			o.alias, o.display = system.BootUefiHttp, "UEFI HTTP boot image (Boot.HttpBootUri)"
		case d.Slot != "" && kind == system.SlotUSB:
			o.alias, o.display, o.related = "Usb", "Virtual USB stick "+d.Slot, slotURI(v, d.Slot)
		case d.Slot != "":
			o.alias, o.display, o.related = system.BootCd, "Virtual CD "+d.Slot, slotURI(v, d.Slot)
		case d.CDROM:
			o.alias, o.display = system.BootCd, "CD-ROM "+d.Name
		default:
			o.alias, o.display, o.related = system.BootHdd, "Disk "+d.Name, uri+"/Storage/"+storageID+"/Drives/"+d.Name
		}
		out = append(out, o)
	}
	for _, n := range v.NICs {
		out = append(out, bootOption{id: "nic-" + n.Name, name: n.Name, order: n.BootOrder, alias: system.BootPxe,
			display: "Network interface " + n.Name, related: uri + "/EthernetInterfaces/" + n.Name})
	}
	return out
}

// slotURI is the system's VirtualMedia resource of slot, "" when the
// system has no such slot.
func slotURI(v SystemView, slot string) string {
	for _, sl := range v.Slots {
		if sl.Slot == slot {
			return systemURI(v) + "/VirtualMedia/" + slot
		}
	}
	return ""
}

// bootOrder is Boot.BootOrder: the references of the options with a
// bootOrder, lowest first. It names them as [bootOptions] does without
// building the options (every render of a System reads it).
func bootOrder(v SystemView) []string {
	type ref struct {
		id    string
		order int64
	}
	var numbered []ref
	for _, d := range v.Disks {
		if d.BootOrder > 0 {
			numbered = append(numbered, ref{"disk-" + d.Name, d.BootOrder})
		}
	}
	for _, n := range v.NICs {
		if n.BootOrder > 0 {
			numbered = append(numbered, ref{"nic-" + n.Name, n.BootOrder})
		}
	}
	slices.SortStableFunc(numbered, func(a, b ref) int { return cmp.Compare(a.order, b.order) })
	refs := make([]string, 0, len(numbered))
	for _, o := range numbered {
		refs = append(refs, o.id)
	}
	return refs
}

func (s *Server) listBootOptions(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := systemURI(v) + "/BootOptions"
	var uris []string
	for _, o := range bootOptions(v) {
		uris = append(uris, uri+"/"+o.id)
	}
	return send(c, http.StatusOK, collection(uri, "#BootOptionCollection.BootOptionCollection", "Boot Option Collection", uris))
}

func (s *Server) getBootOption(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	for _, o := range bootOptions(v) {
		if o.id != c.Param("sub") {
			continue
		}
		body := obj{
			"@odata.id":           systemURI(v) + "/BootOptions/" + o.id,
			"@odata.type":         "#BootOption.v1_0_6.BootOption",
			"Id":                  o.id,
			"Name":                o.name,
			"BootOptionReference": o.id,
			"DisplayName":         o.display,
			"Alias":               o.alias,
		}
		if o.related != "" {
			body["RelatedItem"] = []obj{link(o.related)}
		}
		return send(c, http.StatusOK, body)
	}
	return fmt.Errorf("boot option %q of %s: %w", c.Param("sub"), v.Key, ErrNotFound)
}
