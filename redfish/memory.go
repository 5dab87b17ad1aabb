package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// A VM's memory is one Memory resource: its size is the VM spec's (guest
// memory, else the memory request or limit), and it is what QEMU shows the
// guest as one SMBIOS memory device ("DIMM 0"). It is not a physical part:
// MemoryDeviceType Logical, volatile DRAM, no speed, no serial number.

// memoryID is the id of the VM's one Memory resource.
const memoryID = "DIMM0"

func (s *Server) listMemory(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	uri := systemURI(v) + "/Memory"
	return send(c, http.StatusOK, collection(uri, "#MemoryCollection.MemoryCollection", "Memory Collection", []string{uri + "/" + memoryID}))
}

func (s *Server) getMemory(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if c.Param("sub") != memoryID {
		return fmt.Errorf("memory %q of %s: %w", c.Param("sub"), v.Key, ErrNotFound)
	}
	var capacity any // null: the spec's memory does not parse
	if v.MemoryBytes > 0 {
		capacity = v.MemoryBytes >> 20
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":            systemURI(v) + "/Memory/" + memoryID,
		"@odata.type":          "#Memory.v1_23_0.Memory",
		"Id":                   memoryID,
		"Name":                 "Guest memory",
		"Description":          "The memory of KubeVirt VirtualMachine " + v.Key.String(),
		"CapacityMiB":          capacity,
		"MemoryDeviceType":     "Logical",
		"MemoryType":           "DRAM",
		"OperatingMemoryModes": []string{"Volatile"},
		"Manufacturer":         "KubeVirt",
		"Status":               statusOK(),
	})
}
