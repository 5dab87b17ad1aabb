package backend

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/health"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// PVCLookup finds a PVC by namespace and name (the inventory cache).
type PVCLookup func(namespace, name string) (*corev1.PersistentVolumeClaim, error)

// View turns one read of a VM into what the Redfish service shows.
// slots are the slot ids every system offers (empty ones included).
func View(vm *apply.VM, slots []string, pvc PVCLookup) redfish.SystemView {
	spec := kubevirt.TemplateSpecOf(vm.Object)
	cpu := kubevirt.SpecCPUOf(spec)
	v := redfish.SystemView{
		Key:        vm.Key,
		Revision:   vm.Revision(),
		UUID:       kubevirt.FirmwareUUIDOf(vm.Object, vm.VMI),
		Labels:     vm.Object.GetLabels(),
		PowerState: power.State(vm),
		Boot:       vm.Boot,
		Sockets:    cpu.Sockets,
		Cores:      cpu.Cores,
		Threads:    cpu.Threads,
	}
	v.MemoryBytes = kubevirt.SpecMemoryOf(spec)
	v.BootMode, v.SecureBoot = vm.Firmware()
	v.BootModes = power.BootModes(vm)
	if vm.VMI != nil && !kubevirt.Final(vm.VMI) {
		mode, secure := vm.BootedFirmware()
		v.Booted = &redfish.Firmware{Mode: mode, SecureBoot: secure}
	}
	v.NICs = nics(vm, spec)
	v.Disks = disks(vm.Key.Namespace, spec, pvc)
	for _, id := range slots {
		sl, ok := vm.Slots[id]
		if !ok {
			sl = system.MediaSlot{Slot: id}
		}
		v.Slots = append(v.Slots, sl)
	}
	for id, sl := range vm.Slots {
		if !slices.Contains(slots, id) && id != system.HTTPBootSlot {
			v.Slots = append(v.Slots, sl)
		}
	}
	v.HTTPBoot = vm.Slots[system.HTTPBootSlot]
	v.RestartRequired = kubevirt.VMConditionOf(vm.Object, kubevirt.ConditionRestartRequired).True()
	v.Health, v.BootProgress = health.Of(vm), health.Progress(vm)
	return v
}

func nics(vm *apply.VM, spec map[string]any) []redfish.NIC {
	macs := kubevirt.MACsOf(vm.VMI)
	var out []redfish.NIC
	for _, i := range kubevirt.SpecInterfacesOf(spec) {
		mac := macs[i.Name]
		if mac == "" {
			mac = i.MAC
		}
		out = append(out, redfish.NIC{Name: i.Name, MAC: mac, BootOrder: i.BootOrder})
	}
	return out
}

func disks(namespace string, spec map[string]any, pvc PVCLookup) []redfish.Disk {
	volumes := map[string]kubevirt.Volume{}
	for _, v := range kubevirt.SpecVolumesOf(spec) {
		if v.Name != "" {
			volumes[v.Name] = v
		}
	}
	var out []redfish.Disk
	for _, d := range kubevirt.SpecDisksOf(spec) {
		slot, media := strings.CutPrefix(d.Name, apply.DiskPrefix)
		if !media {
			slot = ""
		}
		out = append(out, redfish.Disk{Name: d.Name, CDROM: d.CDROM, CapacityBytes: capacity(namespace, volumes[d.Name], pvc),
			BootOrder: d.BootOrder, Slot: slot, Serial: d.Serial})
	}
	return out
}

// capacity is the size of a volume: its PVC's bound capacity (or request),
// a DataVolume's PVC of the same name, or an emptyDisk's capacity.
func capacity(namespace string, vol kubevirt.Volume, pvc PVCLookup) int64 {
	claim := vol.Claim
	if claim == "" {
		claim = vol.DataVolume
	}
	if claim != "" && pvc != nil {
		if c, err := pvc(namespace, claim); err == nil {
			if q, ok := c.Status.Capacity[corev1.ResourceStorage]; ok {
				return q.Value()
			}
			if q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
				return q.Value()
			}
		}
	}
	if vol.EmptyDisk != "" {
		if q, err := resource.ParseQuantity(vol.EmptyDisk); err == nil {
			return q.Value()
		}
	}
	return 0
}
