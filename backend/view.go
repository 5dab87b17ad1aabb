package backend

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/health"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// uidNamespace derives a firmware UUID from the VM's UID for the rare VM
// whose template carries none (KubeVirt >= 1.6 persists one in
// spec.template.spec.domain.firmware.uuid): stable for the life of the VM.
var uidNamespace = uuid.MustParse("5f3f0c56-0f53-4c1b-8f0e-3a4c8f6f2b10")

// PVCLookup finds a PVC by namespace and name (the inventory cache).
type PVCLookup func(namespace, name string) (*corev1.PersistentVolumeClaim, error)

// View turns one read of a VM into what the Redfish service shows.
// slots are the slot ids every system offers (empty ones included).
func View(vm *apply.VM, slots []string, pvc PVCLookup) redfish.SystemView {
	obj := vm.Object.Object
	tmpl := mapAt(obj, "spec", "template", "spec")
	domain := mapAt(tmpl, "domain")
	v := redfish.SystemView{
		Key:        vm.Key,
		UUID:       firmwareUUID(vm),
		Labels:     vm.Object.GetLabels(),
		PowerState: power.State(vm),
		Boot:       vm.Boot,
		Sockets:    intAt(domain, 1, "cpu", "sockets"),
		Cores:      intAt(domain, 1, "cpu", "cores"),
		Threads:    intAt(domain, 1, "cpu", "threads"),
	}
	v.MemoryBytes = memoryBytes(domain)
	v.BootMode, v.SecureBoot = apply.Firmware(vm.Object)
	v.NICs = nics(vm, domain)
	v.Disks = disks(vm.Key.Namespace, tmpl, pvc)
	for _, id := range slots {
		sl, ok := vm.Slots[id]
		if !ok {
			sl = system.MediaSlot{Slot: id}
		}
		v.Slots = append(v.Slots, sl)
	}
	for id, sl := range vm.Slots {
		if !contains(slots, id) && id != system.HTTPBootSlot {
			v.Slots = append(v.Slots, sl)
		}
	}
	v.HTTPBoot = vm.Slots[system.HTTPBootSlot]
	v.RestartRequired = restartRequired(vm.Object)
	v.Health, v.BootProgress = health.Of(vm), health.Progress(vm)
	v.Version = version(v)
	return v
}

// version is the ETag of the view: a digest of everything shown, so it
// changes exactly when the resource changes (not on every status heartbeat).
func version(v redfish.SystemView) string {
	v.Version = ""
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func firmwareUUID(vm *apply.VM) string {
	if s := stringAt(vm.Object.Object, "spec", "template", "spec", "domain", "firmware", "uuid"); s != "" {
		return s
	}
	if vm.VMI != nil {
		if s := stringAt(vm.VMI.Object, "spec", "domain", "firmware", "uuid"); s != "" {
			return s
		}
	}
	return uuid.NewSHA1(uidNamespace, []byte(vm.Object.GetUID())).String()
}

func memoryBytes(domain map[string]any) int64 {
	for _, path := range [][]string{{"memory", "guest"}, {"resources", "requests", "memory"}, {"resources", "limits", "memory"}} {
		if s := stringAt(domain, path...); s != "" {
			if q, err := resource.ParseQuantity(s); err == nil {
				return q.Value()
			}
		}
	}
	return 0
}

func nics(vm *apply.VM, domain map[string]any) []redfish.NIC {
	macs := map[string]string{}
	if vm.VMI != nil {
		for _, st := range sliceAt(vm.VMI.Object, "status", "interfaces") {
			if m, ok := st.(map[string]any); ok {
				name, _ := m["name"].(string)
				mac, _ := m["mac"].(string)
				if name != "" && mac != "" {
					macs[name] = mac
				}
			}
		}
	}
	var out []redfish.NIC
	for _, it := range sliceAt(domain, "devices", "interfaces") {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		mac := macs[name]
		if mac == "" {
			mac, _ = m["macAddress"].(string)
		}
		out = append(out, redfish.NIC{Name: name, MAC: mac})
	}
	return out
}

func disks(namespace string, tmpl map[string]any, pvc PVCLookup) []redfish.Disk {
	volumes := map[string]map[string]any{}
	for _, it := range sliceAt(tmpl, "volumes") {
		if m, ok := it.(map[string]any); ok {
			if name, _ := m["name"].(string); name != "" {
				volumes[name] = m
			}
		}
	}
	var out []redfish.Disk
	for _, it := range sliceAt(tmpl, "domain", "devices", "disks") {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		_, cd := m["cdrom"]
		out = append(out, redfish.Disk{Name: name, CDROM: cd, CapacityBytes: capacity(namespace, volumes[name], pvc)})
	}
	return out
}

// capacity is the size of a volume: its PVC's bound capacity (or request),
// a DataVolume's PVC of the same name, or an emptyDisk's capacity.
func capacity(namespace string, vol map[string]any, pvc PVCLookup) int64 {
	claim := stringAt(vol, "persistentVolumeClaim", "claimName")
	if claim == "" {
		claim = stringAt(vol, "dataVolume", "name")
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
	if s := stringAt(vol, "emptyDisk", "capacity"); s != "" {
		if q, err := resource.ParseQuantity(s); err == nil {
			return q.Value()
		}
	}
	return 0
}

func restartRequired(vm *unstructured.Unstructured) bool {
	for _, c := range sliceAt(vm.Object, "status", "conditions") {
		if m, ok := c.(map[string]any); ok && m["type"] == "RestartRequired" && m["status"] == "True" {
			return true
		}
	}
	return false
}
