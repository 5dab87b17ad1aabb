package redfish

import (
	"net"
	"net/http"

	"github.com/labstack/echo/v4"
)

// A manager's NetworkProtocol is the bridge's own: the one protocol it
// serves Redfish over, HTTPS (HTTP when run with --insecure-http), on the
// port of the listener the request came in on (the container's port: a
// Kubernetes Service in front may expose it under another). Nothing else
// (SSH, IPMI, SNMP, virtual media over NFS/CIFS, KVM) exists, so nothing
// else is shown. Read-only: the protocols follow the bridge's flags.

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
	return send(c, http.StatusOK, obj{
		"@odata.id":   managerURI(v) + "/NetworkProtocol",
		"@odata.type": "#ManagerNetworkProtocol.v1_12_0.ManagerNetworkProtocol",
		"Id":          "NetworkProtocol",
		"Name":        "Manager Network Protocol",
		"Description": "The protocols redfish-bridge serves Redfish over",
		"HTTPS":       https,
		"HTTP":        plain,
		"Status":      statusOK(),
	})
}
