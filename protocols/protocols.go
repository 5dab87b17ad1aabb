package protocols

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// Writer reads a VM and records its switches (apply.Client).
type Writer interface {
	Read(ctx context.Context, key system.Key) (*apply.VM, error)
	Protocols(ctx context.Context, key system.Key, sw system.ProtocolSwitch) (*apply.VM, error)
}

// IPMIPorts says which UDP port a System's IPMI endpoint has
// (ipmi.PortTable), switched on or not.
type IPMIPorts interface {
	IPMIPort(key system.Key) (port int, ok bool)
}

// SSHPort is the SSH console's port (sshconsole.Part); ok false until
// it listens.
type SSHPort interface {
	Port() (port int, ok bool)
}

// Table shows and switches each System's IPMI and SSH
// (redfish.Protocols). Set its parts before the Redfish service serves.
type Table struct {
	w    Writer
	ipmi IPMIPorts // nil: no IPMI endpoint
	ssh  SSHPort   // nil: no SSH console
}

var _ redfish.Protocols = (*Table)(nil)

// New returns the Table writing through w; ipmi nil: no IPMI endpoint.
func New(w Writer, ipmi IPMIPorts) *Table { return &Table{w: w, ipmi: ipmi} }

// SetSSH gives the Table the SSH console (none before).
func (t *Table) SetSSH(ssh SSHPort) { t.ssh = ssh }

// Served reports whether any protocol's part runs (else the Manager
// shows none).
func (t *Table) Served() bool { return t.ipmi != nil || t.ssh != nil }

// Protocols implements redfish.Protocols: IPMI is enabled when the
// System has a port and is not switched off (a switched-off System keeps
// its port, shown); SSH when not switched off, on the console's port.
func (t *Table) Protocols(ctx context.Context, key system.Key) (redfish.ManagerProtocols, error) {
	vm, err := t.w.Read(ctx, key)
	if err != nil {
		return redfish.ManagerProtocols{}, fmt.Errorf("protocols of %s: %w", key, err)
	}
	var out redfish.ManagerProtocols
	if t.ipmi != nil {
		port, ok := t.ipmi.IPMIPort(key)
		out.IPMI = redfish.Protocol{Served: true, Enabled: ok && !vm.Protocols.IPMIOff, Port: port}
	}
	if t.ssh != nil {
		port, _ := t.ssh.Port()
		out.SSH = redfish.Protocol{Served: true, Enabled: !vm.Protocols.SSHOff, Port: port}
	}
	return out, nil
}

// SwitchProtocols implements redfish.Protocols: it records sw through
// redfish-protocols.
func (t *Table) SwitchProtocols(ctx context.Context, key system.Key, sw system.ProtocolSwitch) error {
	if _, err := t.w.Protocols(ctx, key, sw); err != nil {
		return fmt.Errorf("switch protocols of %s: %w", key, err)
	}
	return nil
}

// VMs is the VM cache (inventory.Inventory).
type VMs interface {
	VM(key system.Key) (*unstructured.Unstructured, error)
}

// Switches reads the switches from the VM cache: the console Opener's
// gate (console.Switches).
type Switches struct{ VMs VMs }

// ProtocolEnabled reports whether key's protocol is on; a VM the cache
// does not hold has every protocol on (the Opener has refused it already).
func (s Switches) ProtocolEnabled(key system.Key, protocol string) bool {
	vm, err := s.VMs.VM(key)
	if err != nil {
		return true
	}
	return apply.ProtocolsOf(vm).Enabled(protocol)
}
