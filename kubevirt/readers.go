package kubevirt

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Disk is one disk of a VM template or VMI spec.
type Disk struct {
	Name      string
	BootOrder int64 // 0: none
	CDROM     bool
	Serial    string // the serial number the guest sees ("" for none)
}

// Interface is one network interface of a VM template or VMI spec.
type Interface struct {
	Name      string
	BootOrder int64 // 0: none
	MAC       string
}

// Volume is one volume of a VM template or VMI spec: the claim it mounts,
// if any, and an emptyDisk's capacity.
type Volume struct {
	Name       string
	Claim      string // persistentVolumeClaim.claimName
	DataVolume string // dataVolume.name (its PVC has the same name)
	EmptyDisk  string // emptyDisk.capacity
}

// DisksOf lists a VM's template disks in list order.
func DisksOf(vm *unstructured.Unstructured) []Disk { return SpecDisksOf(TemplateSpecOf(vm)) }

// InterfacesOf lists a VM's template interfaces in list order.
func InterfacesOf(vm *unstructured.Unstructured) []Interface {
	return SpecInterfacesOf(TemplateSpecOf(vm))
}

// VolumesOf lists a VM's template volumes in list order.
func VolumesOf(vm *unstructured.Unstructured) []Volume { return SpecVolumesOf(TemplateSpecOf(vm)) }

// TemplateSpecOf is a VM's spec.template.spec (shared, not a copy).
func TemplateSpecOf(vm *unstructured.Unstructured) map[string]any {
	return MapAt(vm.Object, TemplateSpec...)
}

// SpecDisksOf lists the disks of a (template or VMI) spec in list order.
func SpecDisksOf(spec map[string]any) []Disk {
	var out []Disk
	for _, m := range elements(spec, SpecDisks) {
		_, cd := m[KeyCDROM]
		out = append(out, Disk{Name: StringAt(m, KeyName), BootOrder: BootOrderOf(m), CDROM: cd, Serial: StringAt(m, KeySerial)})
	}
	return out
}

// SpecInterfacesOf lists the interfaces of a (template or VMI) spec.
func SpecInterfacesOf(spec map[string]any) []Interface {
	var out []Interface
	for _, m := range elements(spec, SpecInterfaces) {
		out = append(out, Interface{Name: StringAt(m, KeyName), BootOrder: BootOrderOf(m), MAC: StringAt(m, KeyMAC)})
	}
	return out
}

// SpecVolumesOf lists the volumes of a (template or VMI) spec.
func SpecVolumesOf(spec map[string]any) []Volume {
	var out []Volume
	for _, m := range elements(spec, SpecVolumes) {
		out = append(out, Volume{Name: StringAt(m, KeyName), Claim: StringAt(m, VolumeClaim...),
			DataVolume: StringAt(m, VolumeDataVolume...), EmptyDisk: StringAt(m, VolumeEmptyDiskCapacity...)})
	}
	return out
}

// CPU is a spec's CPU topology; an unset count reads 1.
type CPU struct{ Sockets, Cores, Threads int }

// SpecCPUOf reads a (template or VMI) spec's CPU topology.
func SpecCPUOf(spec map[string]any) CPU {
	cpu := MapAt(spec, SpecCPU...)
	return CPU{Sockets: positive(cpu, "sockets"), Cores: positive(cpu, "cores"), Threads: positive(cpu, "threads")}
}

// SpecMemoryOf is a (template or VMI) spec's memory in bytes: the guest
// memory, else the memory request, else the limit; 0 when none parses.
func SpecMemoryOf(spec map[string]any) int64 {
	res := MapAt(spec, SpecResources...)
	for _, s := range []string{StringAt(spec, SpecGuestMemory...), StringAt(res, "requests", "memory"), StringAt(res, "limits", "memory")} {
		if s == "" {
			continue
		}
		if q, err := resource.ParseQuantity(s); err == nil {
			return q.Value()
		}
	}
	return 0
}

// RunStrategyOf is a VM's spec.runStrategy, "" when unset.
func RunStrategyOf(vm *unstructured.Unstructured) RunStrategyValue {
	return RunStrategyValue(StringAt(vm.Object, RunStrategy...))
}

// RebootPolicyOf is a VM template's rebootPolicy, "" when unset.
func RebootPolicyOf(vm *unstructured.Unstructured) string {
	return StringAt(vm.Object, RebootPolicy...)
}

// PrintableStatusOf is a VM's status.printableStatus.
func PrintableStatusOf(vm *unstructured.Unstructured) Status {
	return Status(StringAt(vm.Object, PrintableStatus...))
}

// StateChangeRequest is one entry of a VM's status.stateChangeRequests: how
// virt-api's start, stop and restart subresources ask virt-controller to
// act. virt-controller acts on the first entry only and removes it once
// done: a Stop (UID = the VMI to stop) when that VMI is gone, a Start when
// a live VMI exists.
type StateChangeRequest struct {
	Action StateChangeAction
	UID    string // the VMI a Stop is for
}

// StateChangeRequestsOf decodes a VM's status.stateChangeRequests.
func StateChangeRequestsOf(vm *unstructured.Unstructured) []StateChangeRequest {
	raw := SliceAt(vm.Object, StateChangeRequests...)
	out := make([]StateChangeRequest, 0, len(raw))
	for _, r := range raw {
		m, _ := r.(map[string]any)
		out = append(out, StateChangeRequest{Action: StateChangeAction(StringAt(m, KeyAction)), UID: StringAt(m, KeyUID)})
	}
	return out
}

// EncodeStateChangeRequests is the status.stateChangeRequests list of reqs.
func EncodeStateChangeRequests(reqs []StateChangeRequest) []any {
	out := make([]any, 0, len(reqs))
	for _, r := range reqs {
		m := map[string]any{KeyAction: string(r.Action)}
		if r.UID != "" {
			m[KeyUID] = r.UID
		}
		out = append(out, m)
	}
	return out
}

// Condition is one status.conditions entry.
type Condition struct {
	Type, Status, Reason string
	LastTransitionTime   time.Time // zero when absent or unparsable
}

// True reports whether the condition's status is True.
func (c Condition) True() bool { return c.Status == "True" }

// VMConditionOf returns a VM's condition of type typ (zero when absent).
func VMConditionOf(vm *unstructured.Unstructured, typ string) Condition {
	return conditionAt(vm, VMConditions, typ)
}

func conditionAt(obj *unstructured.Unstructured, path Path, typ string) Condition {
	if obj == nil {
		return Condition{}
	}
	for _, m := range elements(obj.Object, path) {
		if m["type"] != typ {
			continue
		}
		c := Condition{Type: typ, Status: StringAt(m, "status"), Reason: StringAt(m, "reason")}
		if t, err := time.Parse(time.RFC3339, StringAt(m, "lastTransitionTime")); err == nil {
			c.LastTransitionTime = t.UTC()
		}
		return c
	}
	return Condition{}
}

// elements returns the objects of the list at path (shared, not copies);
// elements that are not objects are skipped.
func elements(obj map[string]any, path Path) []map[string]any {
	var out []map[string]any
	for _, e := range SliceAt(obj, path...) {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// NameOf returns a list element's name.
func NameOf(m map[string]any) string { return StringAt(m, KeyName) }

// BootOrderOf returns a disk's or interface's bootOrder, 0 when unset.
func BootOrderOf(m map[string]any) int64 {
	switch v := m[KeyBootOrder].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case int:
		return int64(v)
	}
	return 0
}

// MapAt reads the map at path without copying; nil when absent or not a
// map.
func MapAt(m map[string]any, path ...string) map[string]any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	out, _ := v.(map[string]any)
	return out
}

// SliceAt reads the list at path without copying; nil when absent or not a
// list.
func SliceAt(m map[string]any, path ...string) []any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	out, _ := v.([]any)
	return out
}

// StringAt reads the string at path; "" when absent or not a string.
func StringAt(m map[string]any, path ...string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	out, _ := v.(string)
	return out
}

// positive reads a count at key, 1 when absent, not a number or not
// positive.
func positive(m map[string]any, key string) int {
	switch n := m[key].(type) {
	case int64:
		if n > 0 {
			return int(n)
		}
	case float64:
		if n > 0 {
			return int(n)
		}
	}
	return 1
}
