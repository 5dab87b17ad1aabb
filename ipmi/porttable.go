package ipmi

import (
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// PortTable answers which UDP port a System's IPMI endpoint is served on,
// from the VM cache by the same rule the endpoint follows ([Ports]), so the
// Manager's NetworkProtocol shows what every replica serves.
type PortTable struct {
	cfg Config
	inv Inventory
}

// NewPortTable returns the PortTable of the endpoint configured by cfg,
// reading inv.
func NewPortTable(cfg Config, inv Inventory) *PortTable {
	return &PortTable{cfg: cfg, inv: inv}
}

// IPMIPort is the port key's annotation names (protocols.IPMIPorts),
// when it lies in the range and no VM sorting first names it too.
func (t *PortTable) IPMIPort(key system.Key) (int, bool) {
	if !t.cfg.Enabled() {
		return 0, false
	}
	vm, err := t.inv.VM(key)
	if err != nil {
		return 0, false
	}
	value, ok := vm.GetAnnotations()[PortAnnotation]
	if !ok {
		return 0, false
	}
	// The VMs naming the same value are the only ones that can take it.
	vms, err := t.inv.ListVMs("", labels.Everything())
	if err != nil {
		return 0, false
	}
	annotated := map[system.Key]string{key: value}
	for _, o := range vms {
		if o.GetAnnotations()[PortAnnotation] == value {
			annotated[system.Key{Namespace: o.GetNamespace(), Name: o.GetName()}] = value
		}
	}
	ports, _ := Ports(annotated, t.cfg) // the endpoint logs what it refuses
	for port, k := range ports {
		if k == key {
			return port, true
		}
	}
	return 0, false
}
