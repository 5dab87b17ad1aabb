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
	root := obj{
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
		"Links": obj{"Sessions": link(sessionsURI)},
	}
	for _, r := range s.resources {
		if r.root != "" {
			root[r.root] = link(r.uri)
		}
	}
	return send(c, http.StatusOK, root)
}

// getOData is the OData service document: the resources' entries.
func (s *Server) getOData(c echo.Context) error {
	var values []obj
	for _, r := range s.resources {
		if r.odata != "" {
			values = append(values, obj{"name": r.odata, "kind": r.kind, "url": r.uri})
		}
	}
	return send(c, http.StatusOK, obj{"@odata.context": "/redfish/v1/$metadata", "value": values})
}
