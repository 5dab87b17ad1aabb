package redfish

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// RedfishVersion is the protocol version the service claims.
const RedfishVersion = "1.17.0"

func (s *Server) getVersions(c echo.Context) error {
	return send(c, http.StatusOK, obj{"v1": "/redfish/v1/"})
}

func (s *Server) getServiceRoot(c echo.Context) error {
	return send(c, http.StatusOK, obj{
		"@odata.id":      "/redfish/v1",
		"@odata.type":    "#ServiceRoot.v1_20_0.ServiceRoot",
		"Id":             "RootService",
		"Name":           "Redfish bridge for KubeVirt",
		"RedfishVersion": RedfishVersion,
		"UUID":           s.cfg.ServiceUUID,
		"Vendor":         s.cfg.Vendor,
		"Product":        "redfish-bridge",
		"ProtocolFeaturesSupported": obj{
			"ExcerptQuery":    false,
			"ExpandQuery":     obj{"ExpandAll": true, "Levels": true, "Links": true, "NoLinks": true, "MaxLevels": 1}, // expand.go
			"FilterQuery":     false,
			"OnlyMemberQuery": false,
			"SelectQuery":     false,
			"TopSkipQuery":    true,
		},
		"Systems":        link("/redfish/v1/Systems"),
		"Managers":       link("/redfish/v1/Managers"),
		"Chassis":        link("/redfish/v1/Chassis"),
		"SessionService": link("/redfish/v1/SessionService"),
		"AccountService": link("/redfish/v1/AccountService"),
		"Tasks":          link("/redfish/v1/TaskService"),
		"UpdateService":  link(updateServiceURI),
		"Registries":     link("/redfish/v1/Registries"),
		"Links":          obj{"Sessions": link("/redfish/v1/SessionService/Sessions")},
	})
}

// getOData is the OData service document.
func (s *Server) getOData(c echo.Context) error {
	type entry struct {
		Name, Kind, URL string
	}
	var values []obj
	for _, e := range []entry{
		{"Service", "Singleton", "/redfish/v1/"},
		{"Systems", "EntitySet", "/redfish/v1/Systems"},
		{"Managers", "EntitySet", "/redfish/v1/Managers"},
		{"Chassis", "EntitySet", "/redfish/v1/Chassis"},
		{"SessionService", "Singleton", "/redfish/v1/SessionService"},
		{"AccountService", "Singleton", "/redfish/v1/AccountService"},
		{"TaskService", "Singleton", "/redfish/v1/TaskService"},
		{"UpdateService", "Singleton", updateServiceURI},
		{"Registries", "EntitySet", "/redfish/v1/Registries"},
	} {
		values = append(values, obj{"name": e.Name, "kind": e.Kind, "url": e.URL})
	}
	return send(c, http.StatusOK, obj{"@odata.context": "/redfish/v1/$metadata", "value": values})
}
