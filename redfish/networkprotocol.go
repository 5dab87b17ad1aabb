package redfish

import (
	"fmt"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// A manager's NetworkProtocol is the bridge's own: the one protocol it
// serves Redfish over, HTTPS (HTTP when run with --insecure-http), on the
// port of the listener the request came in on (the container's port: a
// Kubernetes Service in front may expose it under another), and, when
// their parts run (Backends.Protocols), IPMI (the System's UDP port) and
// SSH (the SSH console's port, shared by every System). Nothing else
// (SNMP, virtual media over NFS/CIFS, KVM) exists, so nothing else is
// shown. An Administrator switches IPMI and SSH off and on per System with
// a PATCH of their ProtocolEnabled (docs/ipmi.md, "Switching protocols").

func (s *Server) getNetworkProtocol(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	body, err := s.networkProtocol(c, v)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, body)
}

// networkProtocol is the NetworkProtocol of v's Manager as c sees it.
func (s *Server) networkProtocol(c echo.Context, v SystemView) (obj, error) {
	r := c.Request()
	serving := obj{"ProtocolEnabled": true, "Port": nil}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		serving["Port"] = a.Port
	}
	https, plain := serving, obj{"ProtocolEnabled": false}
	if r.TLS == nil {
		https, plain = plain, serving
	}
	body := obj{
		"@odata.id":   managerURI(v) + "/NetworkProtocol",
		"@odata.type": "#ManagerNetworkProtocol.v1_12_0.ManagerNetworkProtocol",
		"Id":          "NetworkProtocol",
		"Name":        "Manager Network Protocol",
		"Description": "The protocols redfish-bridge serves this System's Manager over",
		"HTTPS":       https,
		"HTTP":        plain,
		"Status":      statusOK(),
	}
	if s.b.Protocols == nil {
		return body, nil
	}
	mp, err := s.b.Protocols.Protocols(r.Context(), v.Key)
	if err != nil {
		return nil, fmt.Errorf("protocols of %s: %w", v.Key, err)
	}
	for name, p := range map[string]Protocol{system.ProtocolIPMI: mp.IPMI, system.ProtocolSSH: mp.SSH} {
		if p.Served {
			body[name] = protocolBody(p)
		}
	}
	return body, nil
}

// protocolBody is a Protocol as the schema's Protocol object.
func protocolBody(p Protocol) obj {
	out := obj{"ProtocolEnabled": p.Enabled, "Port": nil, writeableProperties: []string{"ProtocolEnabled"}}
	if p.Port != 0 {
		out["Port"] = p.Port
	}
	return out
}

// patchNetworkProtocol switches the System's IPMI and SSH, as Ansible's
// redfish_config SetNetworkProtocols sends it: {"IPMI": {"ProtocolEnabled":
// false}}. An Administrator's (ConfigureManager) only; a protocol not shown
// is unknown, everything else shown is read-only (the ports follow the
// VM's annotation and the bridge's flags).
func (s *Server) patchNetworkProtocol(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if !hasPrivilege(principal(c), privConfigureManager) {
		m := msg("InsufficientPrivilege", nil)
		m.Resolution = "Switch a Manager's protocols as an Administrator (a user whose scope is every System)."
		return newError(http.StatusForbidden, m)
	}
	body, err := requireBody(c)
	if err != nil {
		return err
	}
	shown, err := s.networkProtocol(c, v)
	if err != nil {
		return err
	}
	if err := checkIfMatch(c, bodyVersion(shown)); err != nil {
		return err
	}
	p := newProps(body)
	var sw system.ProtocolSwitch
	for _, f := range []struct {
		name string
		into **bool
	}{{system.ProtocolIPMI, &sw.IPMI}, {system.ProtocolSSH, &sw.SSH}} {
		name, into := f.name, f.into
		cur, served := shown[name].(obj)
		if !served {
			continue // not shown: done reports it unknown
		}
		if q, ok := p.object(name); ok {
			if on, ok := q.boolean("ProtocolEnabled"); ok {
				*into = &on
			}
			q.done(cur)
		}
	}
	p.done(shown)
	if err := p.err(); err != nil {
		return err
	}
	if !sw.Empty() {
		if err := s.b.Protocols.SwitchProtocols(c.Request().Context(), v.Key, sw); err != nil {
			return fmt.Errorf("switch protocols of %s: %w", v.Key, err)
		}
	}
	return c.NoContent(http.StatusNoContent)
}
