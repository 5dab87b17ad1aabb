package redfish

import (
	"net"
	"net/http"

	"github.com/labstack/echo/v4"
)

// A manager's NetworkProtocol is the bridge's own: the one protocol it
// serves Redfish over, HTTPS (HTTP when run with --insecure-http), on the
// port of the listener the request came in on (the container's port: a
// Kubernetes Service in front may expose it under another), and, when the
// IPMI endpoint runs (Backends.Protocols), IPMI: enabled on the System's
// served UDP port, disabled (no port) when it has none. Nothing else (SNMP,
// virtual media over NFS/CIFS, KVM) exists, so nothing else is shown.
// Read-only: the protocols follow the bridge's flags and the VM's
// annotation (docs/ipmi.md).

func (s *Server) getNetworkProtocol(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
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
		"Description": "The protocols redfish-bridge serves Redfish over",
		"HTTPS":       https,
		"HTTP":        plain,
		"Status":      statusOK(),
	}
	if s.b.Protocols != nil {
		ipmi := obj{"ProtocolEnabled": false, "Port": nil}
		if port, ok := s.b.Protocols.IPMIPort(v.Key); ok {
			ipmi = obj{"ProtocolEnabled": true, "Port": port}
		}
		body["IPMI"] = ipmi
	}
	return send(c, http.StatusOK, body)
}
