package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The UpdateService shows what software the service runs and takes no
// update. A VM has no firmware to flash: KubeVirt boots the OVMF (UEFI)
// or SeaBIOS build of its virt-launcher image, which changes with
// KubeVirt, not through Redfish. So the FirmwareInventory holds one
// entry, the bridge itself (the FirmwareVersion of every Manager, the
// BiosVersion of every System); the firmware type each System boots is
// its Boot.BootSourceOverrideMode and Bios attribute BootMode. The
// inventory is the same for every caller (no system in it), so it needs
// no scope. SimpleUpdate is named in Actions so that clients send it and
// show why it is refused (sushy, so Ironic's firmware interface, checks
// for the action before sending: without it Ironic's last_error said only
// that Actions is missing), and every POST to it is refused: 400
// ActionNotSupported with the reason as Resolution.

const (
	updateServiceURI = "/redfish/v1/UpdateService"
	firmwareURI      = updateServiceURI + "/FirmwareInventory"
	simpleUpdate     = "UpdateService.SimpleUpdate"
	// bridgeFirmwareID is the FirmwareInventory entry of the bridge.
	bridgeFirmwareID = "redfish-bridge"
)

func (s *Server) getUpdateService(c echo.Context) error {
	return send(c, http.StatusOK, obj{
		"@odata.id":         updateServiceURI,
		"@odata.type":       "#UpdateService.v1_17_0.UpdateService",
		"Id":                "UpdateService",
		"Name":              "Update Service",
		"Description":       "What redfish-bridge runs; a KubeVirt VM has no firmware to update through Redfish",
		"ServiceEnabled":    false,
		"FirmwareInventory": link(firmwareURI),
		"Status":            obj{"State": "Disabled", "Health": "OK"},
		"Actions": obj{"#" + simpleUpdate: obj{
			"target": updateServiceURI + "/Actions/" + simpleUpdate,
		}},
	})
}

func (s *Server) listFirmware(c echo.Context) error {
	return send(c, http.StatusOK, collection(firmwareURI, "#SoftwareInventoryCollection.SoftwareInventoryCollection",
		"Firmware Inventory Collection", []string{firmwareURI + "/" + bridgeFirmwareID}))
}

func (s *Server) getFirmware(c echo.Context) error {
	if c.Param("fw") != bridgeFirmwareID {
		return fmt.Errorf("firmware %q: %w", c.Param("fw"), ErrNotFound)
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":   firmwareURI + "/" + bridgeFirmwareID,
		"@odata.type": "#SoftwareInventory.v1_13_0.SoftwareInventory",
		"Id":          bridgeFirmwareID,
		"Name":        "redfish-bridge",
		"Description": "The Redfish service of every Manager (FirmwareVersion) and System (BiosVersion)",
		"SoftwareId":  "redfish-bridge",
		"Version":     s.cfg.Version,
		"Updateable":  false,
		"Status":      statusOK(),
	})
}

// simpleUpdate refuses every SimpleUpdate: there is nothing to flash.
func (s *Server) simpleUpdate(c echo.Context) error {
	m := msg("ActionNotSupported", nil, simpleUpdate)
	m.Resolution = "A KubeVirt VirtualMachine has no firmware to update through Redfish: its UEFI or BIOS firmware comes with KubeVirt's virt-launcher image, and redfish-bridge is updated by deploying a new release."
	return newError(http.StatusBadRequest, m)
}
