package redfish

import (
	"net/http"

	"github.com/labstack/echo/v4"
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
	}
	s.consoleLinks(uri, v.Key.ID(), body)
	if s.b.Logs != nil {
		body["LogServices"] = link(uri + "/LogServices")
	}
	return send(c, http.StatusOK, body)
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
