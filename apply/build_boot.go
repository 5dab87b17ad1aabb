package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// bootloaderOf returns the firmware.bootloader intent of a boot mode, nil
// for none. UEFI is written with secureBoot false: KubeVirt's default secure
// boot needs the SMM feature, which the bridge does not own.
func bootloaderOf(m system.BootMode) map[string]any {
	switch m {
	case system.BootUEFI:
		return map[string]any{"efi": map[string]any{"secureBoot": false}}
	case system.BootLegacy:
		return map[string]any{"bios": map[string]any{}}
	}
	return nil
}

// BuildBoot returns redfish-boot's complete intent for override o given a
// read: the annotation, the boot orders Layout computes (none when o lays out
// nothing, which releases them) and the bootloader once a mode is set.
// Disks named in exclude are left out of the layout (an eject in progress).
// Boot always forces.
//
// Map mode: {name, bootOrder} entries for disks and interfaces that exist in
// the read (never a new element). Atomic mode: the whole disks (and, when
// numbered, interfaces) lists as read with bootOrders rewritten; when the
// override stops laying out after it did, every bootOrder is removed; lists
// are sent when they differ from the read or redfish-boot owns them.
func BuildBoot(mode Mode, vm *VM, o system.BootOverride, exclude map[string]bool) (*Body, error) {
	body := skeleton(vm)
	if o != (system.BootOverride{}) {
		if err := setAnnotation(body, AnnotationBoot, o); err != nil {
			return nil, err
		}
	}
	if bl := bootloaderOf(o.Mode); bl != nil {
		body.Object = mergeInto(body.Object, bootloaderPath, bl)
	}
	layout := Layout(o, devicesOf(vm.Object, exclude))
	if mode == ModeAtomic {
		return buildBootAtomic(vm, body, layout)
	}
	if layout.Disks == nil {
		return &Body{Object: body, Force: true}, nil
	}
	var disks, ifaces []map[string]any
	for _, d := range list(vm.Object, disksPath) {
		if n, ok := layout.Disks[nameOf(d)]; ok {
			disks = append(disks, map[string]any{"name": nameOf(d), "bootOrder": n})
		}
	}
	for _, i := range list(vm.Object, interfacesPath) {
		if n, ok := layout.Interfaces[nameOf(i)]; ok {
			ifaces = append(ifaces, map[string]any{"name": nameOf(i), "bootOrder": n})
		}
	}
	if len(disks) > 0 {
		if err := setList(body, disks, disksPath); err != nil {
			return nil, err
		}
	}
	if len(ifaces) > 0 {
		if err := setList(body, ifaces, interfacesPath); err != nil {
			return nil, err
		}
	}
	return &Body{Object: body, Force: true}, nil
}

func buildBootAtomic(vm *VM, body *unstructured.Unstructured, layout BootOrders) (*Body, error) {
	strip := layout.Disks == nil && Active(vm.Boot)
	for _, l := range []struct {
		path  []string
		order map[string]int64
	}{{disksPath, layout.Disks}, {interfacesPath, layout.Interfaces}} {
		elems := list(vm.Object, l.path)
		for _, e := range elems {
			if n, ok := l.order[nameOf(e)]; ok {
				e["bootOrder"] = n
			} else if strip || l.order != nil {
				delete(e, "bootOrder")
			}
		}
		if len(elems) == 0 || (sameList(vm.Object, l.path, elems) && !ownsList(vm.Object, ManagerBoot, l.path)) {
			continue
		}
		if err := setList(body, elems, l.path); err != nil {
			return nil, err
		}
	}
	return &Body{Object: body, Force: true}, nil
}

// mergeInto sets value at path, creating parents.
func mergeInto(obj map[string]any, path []string, value map[string]any) map[string]any {
	_ = unstructured.SetNestedMap(obj, value, path...)
	return obj
}
