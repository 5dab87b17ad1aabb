package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// Each system has its own manager (its "BMC") with the same id, holding the
// system's virtual media: Ironic 21.x and Debian sushy look for virtual
// media only under the manager.

const managersURI = "/redfish/v1/Managers"

func (s *Server) listManagers(c echo.Context) error {
	return s.sendMembers(c, managersURI, "#ManagerCollection.ManagerCollection", "Manager Collection")
}

func (s *Server) getManager(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := managerURI(v)
	serial, err := s.serialConsole(c, v)
	if err != nil {
		return err
	}
	body := obj{
		"@odata.id":          uri,
		"@odata.type":        "#Manager.v1_24_0.Manager",
		"Id":                 v.Key.ID(),
		"Name":               "Manager of " + v.Key.String(),
		"ManagerType":        "BMC",
		"UUID":               v.UUID,
		"Model":              "redfish-bridge",
		"FirmwareVersion":    s.cfg.Version,
		"PowerState":         "On",
		"Status":             statusOK(),
		"VirtualMedia":       link(uri + "/VirtualMedia"),
		"NetworkProtocol":    link(uri + "/NetworkProtocol"),
		"EthernetInterfaces": link(uri + "/EthernetInterfaces"),
		"Links": obj{
			"ManagerForServers": []obj{link(systemURI(v))},
			"ManagerForChassis": []obj{link(chassisURI(v))},
			// the bridge: the only software a manager runs
			"ActiveSoftwareImage": link(firmwareURI + "/" + bridgeFirmwareID),
		},
		"GraphicalConsole": s.graphicalConsole(),
		"SerialConsole":    serial,
	}
	s.consoleLinks(uri, v.Key.ID(), body)
	if s.b.Logs != nil {
		body["LogServices"] = link(uri + "/LogServices")
	}
	return send(c, http.StatusOK, body)
}

// serialConsole is the Manager's SerialConsole: the serial console
// protocols the bridge runs (IPMI Serial-over-LAN, the SSH console),
// enabled while the System is reachable over one of them. One console
// stream per System at a time (KubeVirt keeps one; docs/serial-console.md),
// whichever protocol opened it: MaxConcurrentSessions 1.
func (s *Server) serialConsole(c echo.Context, v SystemView) (obj, error) {
	out := obj{"ServiceEnabled": false, "MaxConcurrentSessions": 0, "ConnectTypesSupported": []string{}}
	if s.b.Protocols == nil {
		return out, nil
	}
	mp, err := s.b.Protocols.Protocols(c.Request().Context(), v.Key)
	if err != nil {
		return nil, fmt.Errorf("protocols of %s: %w", v.Key, err)
	}
	types := []string{}
	for _, p := range []struct {
		name string
		Protocol
	}{{system.ProtocolIPMI, mp.IPMI}, {system.ProtocolSSH, mp.SSH}} {
		if p.Served {
			types = append(types, p.name)
			out["MaxConcurrentSessions"] = 1
		}
		if p.Served && p.Enabled {
			out["ServiceEnabled"] = true
		}
	}
	out["ConnectTypesSupported"] = types
	return out, nil
}

// listManagerEthernetInterfaces is the manager's own network interfaces:
// none. The bridge serving every manager is one Kubernetes pod whose
// network is the cluster's, no interface of any one system's "BMC", so the
// collection is empty: an honest answer that generic clients (Ansible's
// GetManagerNicInventory, redfish_info's default Manager query) read as
// "no NICs" rather than the failure a missing link would be.
func (s *Server) listManagerEthernetInterfaces(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := managerURI(v) + "/EthernetInterfaces"
	return send(c, http.StatusOK, collection(uri, "#EthernetInterfaceCollection.EthernetInterfaceCollection", "Manager Ethernet Interface Collection", nil))
}
