package apply

import (
	"strings"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// The empty drive and hotplug (KubeVirt v1.9's DeclarativeHotplugVolumes,
// Beta, on by default): a CD-ROM disk may stand in the VM's template
// without a volume (an empty drive), and virt-controller adds a volume
// marked hotpluggable whose disk already exists to the running VMI (and
// removes it again when the volume leaves the template) without a restart
// and without RestartRequired. It cannot hot-add the SATA CD-ROM itself.
// So:
//
//   - once a virtual-media CD slot's drive (disk media-<slot>; not the
//     HttpBootUri slot's, which goes with its volume) is in the template,
//     redfish-media keeps it there, empty, when the slot attaches nothing
//     (ejected, or importing a new image): removing a CD-ROM disk from a
//     running VM is a restart, and the next insert can go in hot;
//   - a volume appearing for a slot whose drive is already in the read,
//     on a VM with a live VMI, is written hotpluggable; any other new
//     volume is plain (a stopped VM boots from a plain volume at its next
//     start; a hotpluggable one is attached only after the domain started,
//     KubeVirt's launcher pod leaves it out); a volume already in the
//     template keeps the flag it has (a flag flipped on a running VM would
//     be a volume change).

// keptDrives lists the CD-ROM drives (media-<slot> disks) of the read whose
// slot attaches nothing in slots: they stay, empty.
func keptDrives(vm *VM, slots map[string]system.MediaSlot) []string {
	var out []string
	for _, d := range kubevirt.DisksOf(vm.Object) {
		slot, ok := strings.CutPrefix(d.Name, DiskPrefix)
		if !ok || !d.CDROM || system.KindOf(slot) != system.SlotCD {
			continue
		}
		if s, has := slots[slot]; has && attached(s) {
			continue
		}
		out = append(out, slot)
	}
	return out
}

// KeptDrives lists the slots whose CD-ROM drive the read holds empty on
// purpose (their slot attaches nothing): the media reconciler's repair
// does not take them for disks missing their volume.
func KeptDrives(vm *VM) []string { return keptDrives(vm, vm.Slots) }

// hasDrive reports whether the read holds slot's CD-ROM drive.
func hasDrive(vm *VM, slot string) bool {
	for _, d := range kubevirt.DisksOf(vm.Object) {
		if d.Name == DiskName(slot) && d.CDROM {
			return true
		}
	}
	return false
}

// hotpluggable decides the hotpluggable flag of an attached slot's volume:
// the flag of the read's volume of the slot when it mounts the same claim,
// else true only for a CD slot whose drive is in the read on a VM with
// a live VMI.
func hotpluggable(vm *VM, s system.MediaSlot) bool {
	for _, v := range list(vm.Object, kubevirt.Volumes) {
		if kubevirt.NameOf(v) == DiskName(s.Slot) && kubevirt.StringAt(v, kubevirt.VolumeClaim...) == s.ClaimName {
			on, _ := v[kubevirt.VolumeClaim[0]].(map[string]any)[kubevirt.VolumeClaimHotpluggable[1]].(bool)
			return on
		}
	}
	return system.KindOf(s.Slot) == system.SlotCD && hasDrive(vm, s.Slot) && kubevirt.Live(vm.VMI)
}
