package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The service serves the registry its messages come from (Base) and the
// attribute registry of its Bios resources (biosregistry.go).

const registriesURI = "/redfish/v1/Registries"

func (s *Server) listRegistries(c echo.Context) error {
	return send(c, http.StatusOK, collection(registriesURI, "#MessageRegistryFileCollection.MessageRegistryFileCollection",
		"Registry File Collection", []string{registriesURI + "/" + baseRegistryID, biosRegistryURI}))
}

func (s *Server) getRegistryFile(c echo.Context) error {
	switch c.Param("reg") {
	case baseRegistryID:
		return send(c, http.StatusOK, registryFile(baseRegistryID, "Base Message Registry File"))
	case biosRegistryID:
		return send(c, http.StatusOK, registryFile(biosRegistryID, "BIOS Attribute Registry File"))
	}
	return fmt.Errorf("registry %q: %w", c.Param("reg"), ErrNotFound)
}

func (s *Server) getRegistry(c echo.Context) error {
	var raw []byte
	switch reg := c.Param("reg"); {
	case reg == baseRegistryID && c.Param("file") == baseRegistryID+".json":
		raw = baseRegistryJSON
	case reg == biosRegistryID && c.Param("file") == biosRegistryID+".json":
		raw = biosRegistryJSON
	default:
		return fmt.Errorf("registry file %q: %w", c.Param("file"), ErrNotFound)
	}
	if c.Request().Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		return c.NoContent(http.StatusOK)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, raw)
}
