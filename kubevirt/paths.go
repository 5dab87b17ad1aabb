package kubevirt

import (
	"fmt"
	"reflect"
	"strings"

	kubevirtv1 "kubevirt.io/api/core/v1"
)

// Path is a field path in an unstructured object, as
// unstructured.NestedFieldNoCopy takes it (path...). Paths are shared: use
// [Path.Child] to extend one, never append.
type Path []string

// Child returns p followed by names, in a new slice.
func (p Path) Child(names ...string) Path {
	out := make(Path, 0, len(p)+len(names))
	return append(append(out, p...), names...)
}

// String is the dotted form, for messages.
func (p Path) String() string { return strings.Join(p, ".") }

// Any is p as fieldpath.MakePath takes it.
func (p Path) Any() []any {
	out := make([]any, len(p))
	for i, s := range p {
		out[i] = s
	}
	return out
}

// jsonPath walks Go field names from type t through their JSON tags
// (pointers and slices are stepped through) and returns the JSON path. It
// panics on a field t does not have: a path the API lacks fails at init.
func jsonPath(t reflect.Type, fields ...string) Path {
	out := make(Path, 0, len(fields))
	for _, name := range fields {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		f, ok := t.FieldByName(name)
		if !ok {
			panic(fmt.Sprintf("kubevirt: %s has no field %s", t, name))
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "" || tag == "-" {
			panic(fmt.Sprintf("kubevirt: %s.%s has no JSON name", t, name))
		}
		out = append(out, tag)
		t = f.Type
	}
	return out
}

var (
	vmType   = reflect.TypeFor[kubevirtv1.VirtualMachine]()
	vmiType  = reflect.TypeFor[kubevirtv1.VirtualMachineInstance]()
	specType = reflect.TypeFor[kubevirtv1.VirtualMachineInstanceSpec]()
)

// Paths in a VMI spec, which is also what a VM's template spec is
// (TemplateSpec.Child(Spec...) is the VM's path).
var (
	SpecDisks        = jsonPath(specType, "Domain", "Devices", "Disks")
	SpecInterfaces   = jsonPath(specType, "Domain", "Devices", "Interfaces")
	SpecVolumes      = jsonPath(specType, "Volumes")
	SpecBootloader   = jsonPath(specType, "Domain", "Firmware", "Bootloader")
	SpecEFI          = jsonPath(specType, "Domain", "Firmware", "Bootloader", "EFI")
	SpecFirmwareUUID = jsonPath(specType, "Domain", "Firmware", "UUID")
	SpecSMM          = jsonPath(specType, "Domain", "Features", "SMM")
	SpecRebootPolicy = jsonPath(specType, "Domain", "RebootPolicy")
	SpecCPU          = jsonPath(specType, "Domain", "CPU")
	SpecGuestMemory  = jsonPath(specType, "Domain", "Memory", "Guest")
	SpecResources    = jsonPath(specType, "Domain", "Resources")
)

// Paths in a VirtualMachine.
var (
	TemplateSpec        = jsonPath(vmType, "Spec", "Template", "Spec")
	Disks               = TemplateSpec.Child(SpecDisks...)
	Interfaces          = TemplateSpec.Child(SpecInterfaces...)
	Volumes             = TemplateSpec.Child(SpecVolumes...)
	Bootloader          = TemplateSpec.Child(SpecBootloader...)
	EFI                 = TemplateSpec.Child(SpecEFI...)
	FirmwareUUID        = TemplateSpec.Child(SpecFirmwareUUID...)
	SMM                 = TemplateSpec.Child(SpecSMM...)
	RebootPolicy        = TemplateSpec.Child(SpecRebootPolicy...)
	Annotations         = jsonPath(vmType, "ObjectMeta", "Annotations")
	RunStrategy         = jsonPath(vmType, "Spec", "RunStrategy")
	StateChangeRequests = jsonPath(vmType, "Status", "StateChangeRequests") // status subresource
	PrintableStatus     = jsonPath(vmType, "Status", "PrintableStatus")
	VMConditions        = jsonPath(vmType, "Status", "Conditions")
)

// Paths in a VirtualMachineInstance.
var (
	VMISpec             = jsonPath(vmiType, "Spec")
	VMIRebootPolicy     = VMISpec.Child(SpecRebootPolicy...)
	VMIFirmwareUUID     = VMISpec.Child(SpecFirmwareUUID...)
	VMIBootloader       = VMISpec.Child(SpecBootloader...)
	VMIEFI              = VMISpec.Child(SpecEFI...)
	VMIPhase            = jsonPath(vmiType, "Status", "Phase")
	VMIConditions       = jsonPath(vmiType, "Status", "Conditions")
	VMIInterfaces       = jsonPath(vmiType, "Status", "Interfaces")
	VMIPhaseTransitions = jsonPath(vmiType, "Status", "PhaseTransitionTimestamps")
	VMIGracePeriod      = jsonPath(vmiType, "Spec", "TerminationGracePeriodSeconds")
)

// Keys and paths inside list elements (a disk, an interface, a volume, a
// state change request) and inside firmware.bootloader.
var (
	KeyName       = jsonPath(reflect.TypeFor[kubevirtv1.Disk](), "Name")[0]
	KeyBootOrder  = jsonPath(reflect.TypeFor[kubevirtv1.Disk](), "BootOrder")[0]
	KeyCDROM      = jsonPath(reflect.TypeFor[kubevirtv1.Disk](), "CDRom")[0]
	KeyDisk       = jsonPath(reflect.TypeFor[kubevirtv1.Disk](), "Disk")[0]
	KeySerial     = jsonPath(reflect.TypeFor[kubevirtv1.Disk](), "Serial")[0]
	KeyBus        = jsonPath(reflect.TypeFor[kubevirtv1.CDRomTarget](), "Bus")[0]
	KeyReadOnly   = jsonPath(reflect.TypeFor[kubevirtv1.CDRomTarget](), "ReadOnly")[0]
	KeyMAC        = jsonPath(reflect.TypeFor[kubevirtv1.Interface](), "MacAddress")[0]
	KeyBIOS       = jsonPath(reflect.TypeFor[kubevirtv1.Bootloader](), "BIOS")[0]
	KeyEFI        = jsonPath(reflect.TypeFor[kubevirtv1.Bootloader](), "EFI")[0]
	KeySecureBoot = jsonPath(reflect.TypeFor[kubevirtv1.EFI](), "SecureBoot")[0]
	KeyEnabled    = jsonPath(reflect.TypeFor[kubevirtv1.FeatureState](), "Enabled")[0]
	KeyAction     = jsonPath(reflect.TypeFor[kubevirtv1.VirtualMachineStateChangeRequest](), "Action")[0]
	KeyUID        = jsonPath(reflect.TypeFor[kubevirtv1.VirtualMachineStateChangeRequest](), "UID")[0]

	VolumeClaim             = jsonPath(reflect.TypeFor[kubevirtv1.Volume](), "PersistentVolumeClaim", "ClaimName")
	VolumeClaimHotpluggable = jsonPath(reflect.TypeFor[kubevirtv1.Volume](), "PersistentVolumeClaim", "Hotpluggable")
	VolumeDataVolume        = jsonPath(reflect.TypeFor[kubevirtv1.Volume](), "DataVolume", "Name")
	VolumeEmptyDiskCapacity = jsonPath(reflect.TypeFor[kubevirtv1.Volume](), "EmptyDisk", "Capacity")
	VMIInterfaceMAC         = jsonPath(reflect.TypeFor[kubevirtv1.VirtualMachineInstanceNetworkInterface](), "MAC")[0]
)
