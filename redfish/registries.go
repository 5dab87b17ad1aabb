package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/event/registry"
)

// The service serves the registry its messages come from (Base), the
// registries its events' messages come from (ResourceEvent and TaskEvent,
// package event/registry: the messages the bridge emits) and the
// attribute registry of its Bios resources (biosregistry.go).

const registriesURI = "/redfish/v1/Registries"

// eventRegistries are the event message registries, by Id, rendered once.
var eventRegistries = func() map[string][]byte {
	out := map[string][]byte{}
	for _, r := range []*registry.Registry{registry.ResourceEvent, registry.TaskEvent} {
		raw, err := r.JSON()
		if err != nil {
			panic(err) // a map of strings always marshals
		}
		out[r.ID()] = raw
	}
	return out
}()

func (s *Server) listRegistries(c echo.Context) error {
	return send(c, http.StatusOK, collection(registriesURI, "#MessageRegistryFileCollection.MessageRegistryFileCollection",
		"Registry File Collection", []string{
			registriesURI + "/" + baseRegistryID, registriesURI + "/" + registry.ResourceEvent.ID(),
			registriesURI + "/" + registry.TaskEvent.ID(), biosRegistryURI,
		}))
}

func (s *Server) getRegistryFile(c echo.Context) error {
	switch reg := c.Param("reg"); reg {
	case baseRegistryID:
		return send(c, http.StatusOK, registryFile(baseRegistryID, "Base Message Registry File"))
	case registry.ResourceEvent.ID():
		return send(c, http.StatusOK, registryFile(reg, "Resource Event Message Registry File"))
	case registry.TaskEvent.ID():
		return send(c, http.StatusOK, registryFile(reg, "Task Event Message Registry File"))
	case biosRegistryID:
		return send(c, http.StatusOK, registryFile(biosRegistryID, "BIOS Attribute Registry File"))
	}
	return fmt.Errorf("registry %q: %w", c.Param("reg"), ErrNotFound)
}

func (s *Server) getRegistry(c echo.Context) error {
	var raw []byte
	reg := c.Param("reg")
	switch {
	case c.Param("file") != reg+".json":
	case reg == baseRegistryID:
		raw = baseRegistryJSON
	case reg == biosRegistryID:
		raw = biosRegistryJSON
	default:
		raw = eventRegistries[reg]
	}
	if raw == nil {
		return fmt.Errorf("registry file %q: %w", c.Param("file"), ErrNotFound)
	}
	if c.Request().Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		return c.NoContent(http.StatusOK)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, raw)
}
