package redfish

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Each system has a chassis with the same id.

const chassisCollURI = "/redfish/v1/Chassis"

func (s *Server) listChassis(c echo.Context) error {
	return s.sendMembers(c, chassisCollURI, "#ChassisCollection.ChassisCollection", "Chassis Collection")
}

func (s *Server) getChassis(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":    chassisURI(v),
		"@odata.type":  "#Chassis.v1_28_0.Chassis",
		"Id":           v.Key.ID(),
		"Name":         "Chassis of " + v.Key.String(),
		"ChassisType":  "Other",
		"UUID":         v.UUID,
		"Manufacturer": "KubeVirt",
		"Model":        "VirtualMachine",
		"SerialNumber": v.UUID,
		"PowerState":   v.PowerState,
		"Status":       statusOK(),
		"Links": obj{
			"ComputerSystems": []obj{link(systemURI(v))},
			"ManagedBy":       []obj{link(managerURI(v))},
		},
	})
}
