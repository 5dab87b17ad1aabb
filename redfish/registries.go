package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The service serves the one registry its messages come from.

const registriesURI = "/redfish/v1/Registries"

func (s *Server) listRegistries(c echo.Context) error {
	return send(c, http.StatusOK, collection(registriesURI, "#MessageRegistryFileCollection.MessageRegistryFileCollection",
		"Registry File Collection", []string{registriesURI + "/" + baseRegistryID}))
}

func (s *Server) getRegistryFile(c echo.Context) error {
	if c.Param("reg") != baseRegistryID {
		return fmt.Errorf("registry %q: %w", c.Param("reg"), ErrNotFound)
	}
	uri := registriesURI + "/" + baseRegistryID
	return send(c, http.StatusOK, obj{
		"@odata.id":   uri,
		"@odata.type": "#MessageRegistryFile.v1_1_3.MessageRegistryFile",
		"Id":          baseRegistryID,
		"Name":        "Base Message Registry File",
		"Registry":    baseRegistryID,
		"Languages":   []string{"en"},
		"Location":    []obj{{"Language": "en", "Uri": uri + "/" + baseRegistryID + ".json"}},
	})
}

func (s *Server) getRegistry(c echo.Context) error {
	if c.Param("reg") != baseRegistryID || c.Param("file") != baseRegistryID+".json" {
		return fmt.Errorf("registry file %q: %w", c.Param("file"), ErrNotFound)
	}
	if c.Request().Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		return c.NoContent(http.StatusOK)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, baseRegistryJSON)
}
