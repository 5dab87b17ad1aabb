package apply

import (
	"context"
	"encoding/json"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// DiskPrefix starts the name of every disk and volume the media manager
// writes: "media-<slot>".
const DiskPrefix = "media-"

// DiskName is the name of the disk (CD-ROM or USB) and of its volume for a
// slot.
func DiskName(slot string) string { return DiskPrefix + slot }

// Decode builds a VM from a VirtualMachine object (and its VMI, may be nil),
// decoding the bridge's annotations. A malformed annotation is logged and
// read as empty: a broken record must not wedge the VM forever.
func Decode(ctx context.Context, key system.Key, obj, vmi *unstructured.Unstructured) *VM {
	vm := &VM{Key: key, Object: obj, VMI: vmi, Slots: map[string]system.MediaSlot{}}
	for k, v := range obj.GetAnnotations() {
		switch {
		case strings.HasPrefix(k, AnnotationMediaPrefix):
			var s system.MediaSlot
			if decodeAnnotation(ctx, key, k, v, &s) {
				s.Slot = strings.TrimPrefix(k, AnnotationMediaPrefix)
				vm.Slots[s.Slot] = s
			}
		case k == AnnotationBoot:
			decodeAnnotation(ctx, key, k, v, &vm.Boot)
		case k == AnnotationPower:
			decodeAnnotation(ctx, key, k, v, &vm.Power)
		case k == AnnotationProtocols:
			decodeAnnotation(ctx, key, k, v, &vm.Protocols)
		}
	}
	return vm
}

// Firmware is the boot mode and Secure Boot the VM's next VMI boots
// ([kubevirt.Firmware] in Redfish words: efi is UEFI, otherwise Legacy).
func (vm *VM) Firmware() (system.BootMode, bool) { return bootMode(kubevirt.Firmware(vm.Object)) }

// BootedFirmware is the boot mode and Secure Boot its VMI booted
// ([kubevirt.VMIFirmware]); the VM must have a VMI.
func (vm *VM) BootedFirmware() (system.BootMode, bool) {
	return bootMode(kubevirt.VMIFirmware(vm.VMI))
}

func bootMode(efi, secureBoot bool) (system.BootMode, bool) {
	if efi {
		return system.BootUEFI, secureBoot
	}
	return system.BootLegacy, secureBoot
}

// Revision names the versions vm was decoded from: the VM's
// resourceVersion and its VMI's ("" without one). Two reads of one VM
// with the same Revision decode to the same VM: everything the bridge
// shows of a system but its disks' PVCs comes from these two objects.
// "" when an object carries no resourceVersion (not from the apiserver).
func (vm *VM) Revision() string { return revisionOf(vm.Object, vm.VMI) }

func revisionOf(obj, vmi *unstructured.Unstructured) string {
	return revisionAt(obj.GetResourceVersion(), vmi)
}

// revisionAt is [revisionOf] of a VM at resourceVersion rv.
func revisionAt(rv string, vmi *unstructured.Unstructured) string {
	if vmi == nil {
		return revisionOfVersions(rv, false, "")
	}
	return revisionOfVersions(rv, true, vmi.GetResourceVersion())
}

// revisionOfVersions is [revisionOf] of a VM at resourceVersion rv and its
// VMI, when there is one (hasVMI), at vmiRV.
func revisionOfVersions(rv string, hasVMI bool, vmiRV string) string {
	switch {
	case rv == "":
		return ""
	case !hasVMI:
		return rv + "/"
	case vmiRV == "":
		return ""
	}
	return rv + "/" + vmiRV
}

func decodeAnnotation(ctx context.Context, key system.Key, name, value string, into any) bool {
	if err := json.Unmarshal([]byte(value), into); err != nil {
		logctx.From(ctx).Warn("ignoring malformed bridge annotation", "vm", key, "annotation", name, "err", err)
		return false
	}
	return true
}

// cloneSlots copies a slot map so a change function cannot edit a read.
func cloneSlots(in map[string]system.MediaSlot) map[string]system.MediaSlot {
	out := make(map[string]system.MediaSlot, len(in))
	maps.Copy(out, in)
	return out
}

// list returns a deep copy of the list at path as maps (elements that are
// not objects are skipped; KubeVirt's lists are lists of objects).
func list(obj *unstructured.Unstructured, path []string) []map[string]any {
	raw, _, _ := unstructured.NestedSlice(obj.Object, path...) // deep copy
	out := make([]map[string]any, 0, len(raw))
	for _, e := range raw {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// toSlice converts maps back for unstructured.SetNestedSlice.
func toSlice(in []map[string]any) []any {
	out := make([]any, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}

// devicesOf reads the disks and interfaces Layout needs.
func devicesOf(obj *unstructured.Unstructured, exclude map[string]bool) Devices {
	var d Devices
	for _, k := range kubevirt.DisksOf(obj) {
		if exclude[k.Name] {
			continue
		}
		slot, media := strings.CutPrefix(k.Name, DiskPrefix)
		d.Disks = append(d.Disks, Device{Name: k.Name, CDROM: k.CDROM, BootOrder: k.BootOrder,
			Removable: media && !k.CDROM, HTTPBoot: media && system.KindOf(slot) == system.SlotHTTPBoot})
	}
	for _, i := range kubevirt.InterfacesOf(obj) {
		d.Interfaces = append(d.Interfaces, Device{Name: i.Name, BootOrder: i.BootOrder})
	}
	return d
}

// ProtocolsOf is the protocol switches recorded on obj (a cached VM, whose
// bridge annotations the cache keeps): every protocol on when none is
// recorded, or when the record is not one (Decode logs that).
func ProtocolsOf(obj metav1.Object) system.Protocols {
	var p system.Protocols
	if v, ok := obj.GetAnnotations()[AnnotationProtocols]; ok {
		if err := json.Unmarshal([]byte(v), &p); err != nil {
			return system.Protocols{}
		}
	}
	return p
}
