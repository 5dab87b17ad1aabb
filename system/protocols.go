package system

// The names of the protocols an administrator switches per System (the
// Manager's NetworkProtocol properties).
const (
	ProtocolIPMI = "IPMI"
	ProtocolSSH  = "SSH"
)

// Protocols is what an administrator switched off on one System's
// Manager (redfish-protocols records it on the VM): the zero value is
// every protocol on, so a VM nobody switched carries nothing.
type Protocols struct {
	IPMIOff bool `json:"ipmiOff,omitempty"`
	SSHOff  bool `json:"sshOff,omitempty"`
}

// IsZero reports whether every protocol is on.
func (p Protocols) IsZero() bool { return p == Protocols{} }

// Enabled reports whether protocol (ProtocolIPMI, ProtocolSSH) is on; a
// protocol without a switch is.
func (p Protocols) Enabled(protocol string) bool {
	switch protocol {
	case ProtocolIPMI:
		return !p.IPMIOff
	case ProtocolSSH:
		return !p.SSHOff
	}
	return true
}

// ProtocolSwitch is one PATCH of the switches: nil leaves a protocol as
// it is.
type ProtocolSwitch struct {
	IPMI, SSH *bool
}

// Empty reports whether s changes nothing.
func (s ProtocolSwitch) Empty() bool { return s.IPMI == nil && s.SSH == nil }

// MergeInto turns p's protocols on or off as s says.
func (s ProtocolSwitch) MergeInto(p *Protocols) {
	if s.IPMI != nil {
		p.IPMIOff = !*s.IPMI
	}
	if s.SSH != nil {
		p.SSHOff = !*s.SSH
	}
}
