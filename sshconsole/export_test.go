package sshconsole

import "github.com/redfish-bridge/redfish-bridge/internal/connshare"

// Peak is the most connections the console's listener held at once (0
// without a cap).
func (p *Part) Peak() int {
	if l, ok := p.ln.(*connshare.Listener); ok {
		return l.Peak()
	}
	return 0
}
