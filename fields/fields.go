package fields

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
)

// Report is who owns what on one VM and what deviates from [Table].
type Report struct {
	VM string `json:"vm"`
	// Mode is the list mode the table was applied in; ModeSource says how it
	// was found: "crd", "managedFields", "flag" or "default".
	Mode       apply.Mode  `json:"mode"`
	ModeSource string      `json:"modeSource"`
	Managers   []Manager   `json:"managers"`
	Deviations []Deviation `json:"deviations"`
	// Notes are observations that are not deviations.
	Notes []string `json:"notes,omitempty"`
	// Objects are the objects the bridge made for the VM (see
	// [InspectObjects]); nil when not read.
	Objects []Object `json:"objects,omitempty"`
}

// Manager is one field manager's ownership.
type Manager struct {
	Name string `json:"name"`
	// Bridge marks the bridge's own managers.
	Bridge bool `json:"bridge"`
	// Operations are the managedFields operations seen (Apply, Update).
	Operations []string `json:"operations"`
	Paths      []string `json:"paths"`
}

// Deviation is one ownership that contradicts the table (see the package
// doc for the precise definition).
type Deviation struct {
	Manager string `json:"manager"`
	Path    string `json:"path"`
	// Kind is "outside" (a bridge manager beyond its fields), "taken"
	// (another manager on a field the bridge claimed) or "foreign" (another
	// manager on an object the bridge made; Path is then Kind/name).
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// Inspect builds the report of vm in mode (modeSource is recorded as is).
func Inspect(vm *unstructured.Unstructured, mode apply.Mode, modeSource string) (*Report, error) {
	owned, err := apply.Owned(vm)
	if err != nil {
		return nil, err
	}
	r := &Report{VM: vm.GetNamespace() + "/" + vm.GetName(), Mode: mode, ModeSource: modeSource, Managers: []Manager{}, Deviations: []Deviation{}}
	for _, mf := range vm.GetManagedFields() {
		i := slices.IndexFunc(r.Managers, func(m Manager) bool { return m.Name == mf.Manager })
		if i < 0 {
			r.Managers = append(r.Managers, Manager{Name: mf.Manager, Bridge: IsBridge(mf.Manager), Paths: apply.Paths(owned[mf.Manager])})
			i = len(r.Managers) - 1
		}
		if op := string(mf.Operation); !slices.Contains(r.Managers[i].Operations, op) {
			r.Managers[i].Operations = append(r.Managers[i].Operations, op)
		}
	}
	c := claims{annotations: vm.GetAnnotations()}
	for _, m := range r.Managers {
		if m.Name == apply.ManagerBoot {
			c.bootOrder = slices.ContainsFunc(m.Paths, bootOrder.MatchString)
		}
	}
	for _, m := range r.Managers {
		for _, p := range m.Paths {
			if d, ok := check(mode, m.Name, p, c); ok {
				r.Deviations = append(r.Deviations, d)
			}
		}
	}
	r.Notes = notes(r)
	return r, nil
}

// notes explains a runStrategy owned outside the bridge on a VM the bridge
// writes (see the package doc for why this is not a deviation).
func notes(r *Report) []string {
	bridge := slices.ContainsFunc(r.Managers, func(m Manager) bool { return m.Bridge })
	var out []string
	for _, m := range r.Managers {
		if bridge && !m.Bridge && slices.ContainsFunc(m.Paths, runStrategy.MatchString) {
			out = append(out, fmt.Sprintf("spec.runStrategy is owned by %s, not %s: the last power change to it did not come through Redfish (or the bridge never powered this VM)",
				m.Name, apply.ManagerPower))
		}
	}
	return out
}

// claims are what the bridge has claimed on the VM.
type claims struct {
	annotations map[string]string
	bootOrder   bool // redfish-boot owns a bootOrder
}

func (c claims) has(annotation string) bool {
	_, ok := c.annotations[annotation]
	return ok
}

func check(mode apply.Mode, manager, path string, c claims) (Deviation, bool) {
	d := Deviation{Manager: manager, Path: path, Kind: "taken"}
	switch {
	case IsBridge(manager):
		if Allowed(mode, manager, path) {
			return d, false
		}
		d.Kind = "outside"
		d.Detail = fmt.Sprintf("%s may not own this in %s mode (apply/doc.go)", manager, mode)
	case authorAnnotation.MatchString(path):
		return d, false
	case bridgeAnnotation.MatchString(path):
		d.Detail = "the redfish-bridge.io/ annotations are the bridge's state"
	case mode == apply.ModeMap && mediaElement.MatchString(path):
		slot := mediaElement.FindStringSubmatch(path)[2]
		if !c.has(apply.AnnotationMediaPrefix + slot) {
			return d, false
		}
		d.Detail = "the CD-ROM of virtual-media slot " + slot + " belongs to " + apply.ManagerMedia
	case mode == apply.ModeMap && c.bootOrder && bootOrder.MatchString(path):
		d.Detail = "boot orders are being set by " + apply.ManagerBoot
	default:
		return d, false
	}
	return d, true
}

// ModeFromManagedFields infers the list mode from how disks/volumes are
// owned: keyed elements mean map mode, a whole-list leaf atomic mode.
func ModeFromManagedFields(vm *unstructured.Unstructured) (apply.Mode, bool) {
	owned, err := apply.Owned(vm)
	if err != nil {
		return "", false
	}
	var mapped, atomic bool
	for _, s := range owned {
		for _, p := range apply.Paths(s) {
			mapped = mapped || keyedDisks.MatchString(p)
			atomic = atomic || wholeDisks.MatchString(p)
		}
	}
	switch {
	case mapped && !atomic:
		return apply.ModeMap, true
	case atomic && !mapped:
		return apply.ModeAtomic, true
	}
	return "", false
}
