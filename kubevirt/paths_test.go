package kubevirt

import (
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// TestPathsInCRDs: every path the bridge reads or writes exists in the
// schema of the CRDs the tests install (both variants), so a path derived
// from kubevirt.io/api is one the apiserver accepts.
func TestPathsInCRDs(t *testing.T) {
	vmPaths := map[string]Path{
		"TemplateSpec": TemplateSpec, "Disks": Disks, "Interfaces": Interfaces, "Volumes": Volumes,
		"Bootloader": Bootloader, "EFI": EFI, "FirmwareUUID": FirmwareUUID, "SMM": SMM,
		"RebootPolicy": RebootPolicy, "RunStrategy": RunStrategy, "StateChangeRequests": StateChangeRequests,
		"PrintableStatus": PrintableStatus, "VMConditions": VMConditions,
		"SecureBoot": EFI.Child(KeySecureBoot), "SMM.enabled": SMM.Child(KeyEnabled),
		"BIOS": Bootloader.Child(KeyBIOS), "GuestMemory": TemplateSpec.Child(SpecGuestMemory...),
		"CPU": TemplateSpec.Child(SpecCPU...), "Resources": TemplateSpec.Child(SpecResources...),
		"disk bootOrder": Disks.Child(KeyBootOrder), "disk cdrom bus": Disks.Child(KeyCDROM, KeyBus),
		"disk readonly": Disks.Child(KeyDisk, KeyReadOnly), "interface mac": Interfaces.Child(KeyMAC),
		"volume claim": Volumes.Child(VolumeClaim...), "volume dataVolume": Volumes.Child(VolumeDataVolume...),
		"volume emptyDisk": Volumes.Child(VolumeEmptyDiskCapacity...),
		"request action":   StateChangeRequests.Child(KeyAction), "request uid": StateChangeRequests.Child(KeyUID),
	}
	vmiPaths := map[string]Path{
		"VMIRebootPolicy": VMIRebootPolicy, "VMIFirmwareUUID": VMIFirmwareUUID, "VMIPhase": VMIPhase,
		"VMIConditions": VMIConditions, "VMIInterfaces": VMIInterfaces, "VMIPhaseTransitions": VMIPhaseTransitions,
		"interface mac": VMIInterfaces.Child(VMIInterfaceMAC),
	}
	for _, v := range crds.Variants {
		list, err := crds.Load(v)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
		for _, c := range list {
			byName[c.Name] = c
		}
		for crd, paths := range map[string]map[string]Path{
			CRDName: vmPaths, VirtualMachineInstances.GroupResource().String(): vmiPaths,
		} {
			c := byName[crd]
			if c == nil {
				t.Fatalf("%s: no CRD %s", v, crd)
			}
			if c.Spec.Group != VirtualMachines.Group || c.Spec.Versions[0].Name != VirtualMachines.Version {
				t.Errorf("%s: CRD %s serves %s/%s, want %s", v, crd, c.Spec.Group, c.Spec.Versions[0].Name, VirtualMachines.GroupVersion())
			}
			root := c.Spec.Versions[0].Schema.OpenAPIV3Schema
			for name, p := range paths {
				if missing := walk(root, p); missing != "" {
					t.Errorf("%s: %s %s: %q is not in the CRD schema", v, crd, name, missing)
				}
			}
		}
	}
}

// walk follows p through properties (and list items); it returns the first
// segment not found, "" when the whole path exists.
func walk(s *apiextensionsv1.JSONSchemaProps, p Path) string {
	for _, name := range p {
		for s.Items != nil && s.Items.Schema != nil {
			s = s.Items.Schema
		}
		next, ok := s.Properties[name]
		if !ok {
			return name
		}
		s = &next
	}
	return ""
}

// TestJSONPath: Go field names become JSON names through pointers, slices
// and inlined structs; a field the API does not have panics (the check that
// keeps every path above honest).
func TestJSONPath(t *testing.T) {
	vm := reflect.TypeFor[kubevirtv1.VirtualMachine]()
	if got, want := jsonPath(vm, "Spec", "Template", "Spec", "Domain", "Devices", "Disks", "CDRom", "Bus").String(),
		"spec.template.spec.domain.devices.disks.cdrom.bus"; got != want {
		t.Errorf("jsonPath = %s, want %s", got, want)
	}
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "no field Bootloader") {
			t.Errorf("jsonPath on a missing field: recovered %v, want a panic naming it", r)
		}
	}()
	jsonPath(vm, "Spec", "Bootloader")
}

// TestChildCopies: extending a shared path never writes into it.
func TestChildCopies(t *testing.T) {
	a := TemplateSpec.Child("x")
	b := TemplateSpec.Child("y")
	if a.String() != "spec.template.spec.x" || b.String() != "spec.template.spec.y" {
		t.Errorf("Child shares its backing array: %s, %s", a, b)
	}
}

// TestSubresourceRequests: the paths and bodies of virt-api's forced stop
// and restart are what virt-api decodes (KubeVirt's StopOptions and
// RestartOptions JSON names).
func TestSubresourceRequests(t *testing.T) {
	if got, want := SubresourcePath("ns", "vm", SubresourceStop), "/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachines/vm/stop"; got != want {
		t.Errorf("SubresourcePath = %s, want %s", got, want)
	}
	if got, want := string(ForceStopBody()), `{"gracePeriod":0}`; got != want {
		t.Errorf("ForceStopBody = %s, want %s", got, want)
	}
	if got, want := string(ForceRestartBody()), `{"gracePeriodSeconds":0}`; got != want {
		t.Errorf("ForceRestartBody = %s, want %s", got, want)
	}
}
