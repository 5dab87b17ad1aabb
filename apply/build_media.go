package apply

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// CD-ROM bus of the media disks: sata works with every machine type
// KubeVirt supports; virtio is rejected for CD-ROMs.
const cdromBus = "sata"

// attached reports whether a slot's CD-ROM disk and volume exist: only once
// its image is on the PVC (Ready). While Pending or Importing the VM does not
// reference the PVC, so no start or restart can grab the ReadWriteOnce claim
// from the import pod (the Multi-Attach bug); Failed detaches.
func attached(s system.MediaSlot) bool {
	return s.Phase == system.MediaReady && s.ClaimName != ""
}

// recorded reports whether a slot has state worth an annotation.
func recorded(s system.MediaSlot) bool {
	return s.Image != "" || s.Phase != system.MediaEmpty || s.Reason != ""
}

// usbBus is the bus of USB stick slots' disks.
const usbBus = "usb"

// mediaDisk and mediaVolume are the pair written for an attached slot,
// always together in one apply. A USB stick slot is a read-only disk on bus
// usb, every other slot a CD-ROM.
func mediaDisk(slot string) map[string]any {
	if !system.KindOf(slot).CDROM() {
		return map[string]any{
			kubevirt.KeyName: DiskName(slot),
			kubevirt.KeyDisk: map[string]any{kubevirt.KeyBus: usbBus, kubevirt.KeyReadOnly: true},
		}
	}
	return map[string]any{
		kubevirt.KeyName:  DiskName(slot),
		kubevirt.KeyCDROM: map[string]any{kubevirt.KeyBus: cdromBus, kubevirt.KeyReadOnly: true},
	}
}

// mediaVolume is an attached slot's volume; hot marks it hotpluggable
// (build_hotplug.go).
func mediaVolume(s system.MediaSlot, hot bool) map[string]any {
	claim := map[string]any{kubevirt.VolumeClaim[1]: s.ClaimName}
	if hot {
		claim[kubevirt.VolumeClaimHotpluggable[1]] = true
	}
	return map[string]any{
		kubevirt.KeyName:        DiskName(s.Slot),
		kubevirt.VolumeClaim[0]: claim,
	}
}

// BuildMedia returns redfish-media's complete intent for slots given a read:
// one annotation per recorded slot and, for each attached slot, its CD-ROM
// disk and volume (hotpluggable where [hotpluggable] says); a CD-ROM drive
// of the read whose slot attaches nothing stays, empty ([keptDrives]).
//
// Map mode: only the media entries. Atomic mode: the whole disks and volumes
// lists as read, with media-* entries added, replaced (a disk keeps the
// bootOrder it carries) or removed; the lists are sent when they differ from
// the read or redfish-media owns them (omission would delete them).
func BuildMedia(mode Mode, vm *VM, slots map[string]system.MediaSlot) (*Body, error) {
	body := skeleton(vm)
	var names []string
	for name, s := range slots {
		s.Slot = name
		slots[name] = s
		names = append(names, name)
	}
	slices.Sort(names)
	var disks, volumes []map[string]any
	for _, name := range names {
		s := slots[name]
		if recorded(s) {
			if err := setAnnotation(body, AnnotationMediaPrefix+name, s); err != nil {
				return nil, err
			}
		}
		if attached(s) {
			disks = append(disks, mediaDisk(name))
			volumes = append(volumes, mediaVolume(s, hotpluggable(vm, s)))
		}
	}
	for _, name := range keptDrives(vm, slots) {
		disks = append(disks, mediaDisk(name))
	}
	if mode == ModeAtomic {
		disks = mergeMedia(list(vm.Object, kubevirt.Disks), disks, true)
		volumes = mergeMedia(list(vm.Object, kubevirt.Volumes), volumes, false)
		if sameList(vm.Object, kubevirt.Disks, disks) && sameList(vm.Object, kubevirt.Volumes, volumes) &&
			!ownsList(vm, ManagerMedia, kubevirt.Disks) && !ownsList(vm, ManagerMedia, kubevirt.Volumes) {
			return &Body{Object: body, Force: true}, nil
		}
		// Disks and volumes always go together: a volume without its disk
		// is attached as a writable disk.
		if err := setList(body, disks, kubevirt.Disks); err != nil {
			return nil, err
		}
		if err := setList(body, volumes, kubevirt.Volumes); err != nil {
			return nil, err
		}
		return &Body{Object: body, Force: true}, nil
	}
	if len(disks) > 0 {
		if err := setList(body, disks, kubevirt.Disks); err != nil {
			return nil, err
		}
		if err := setList(body, volumes, kubevirt.Volumes); err != nil {
			return nil, err
		}
	}
	return &Body{Object: body, Force: false}, nil
}

// mergeMedia rewrites a whole list read (atomic mode): media-* entries not
// wanted are dropped, wanted ones replace the entry of the same name in place
// (disks keep their bootOrder) or are appended.
func mergeMedia(read, want []map[string]any, keepBootOrder bool) []map[string]any {
	byName := map[string]map[string]any{}
	for _, w := range want {
		byName[kubevirt.NameOf(w)] = w
	}
	out := make([]map[string]any, 0, len(read)+len(want))
	done := map[string]bool{}
	for _, e := range read {
		n := kubevirt.NameOf(e)
		w, ok := byName[n]
		switch {
		case ok:
			w = cloneMap(w)
			if bo, has := e[kubevirt.KeyBootOrder]; has && keepBootOrder {
				w[kubevirt.KeyBootOrder] = bo
			}
			out = append(out, w)
			done[n] = true
		case strings.HasPrefix(n, DiskPrefix):
			// a media entry no longer wanted
		default:
			out = append(out, e)
		}
	}
	for _, w := range want {
		if !done[kubevirt.NameOf(w)] {
			out = append(out, cloneMap(w))
		}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any { return runtime.DeepCopyJSON(m) }
