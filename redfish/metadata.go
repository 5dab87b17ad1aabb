package redfish

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// servedTypes are the versioned namespaces of every @odata.type the service
// serves ("Collection" types are unversioned). The $metadata document
// references their DMTF CSDL files; a test checks the list against a crawl.
var servedTypes = []string{
	"AccountService.v1_18_1", "ActionInfo.v1_5_0", "Bios.v1_2_3", "BootOption.v1_0_6", "BootOptionCollection", "Certificate.v1_8_0",
	"CertificateCollection", "Chassis.v1_28_0",
	"ChassisCollection", "ComputerSystem.v1_27_0", "ComputerSystemCollection", "Drive.v1_22_0",
	"EthernetInterface.v1_12_4", "EthernetInterfaceCollection", "Manager.v1_24_0",
	"ManagerAccount.v1_14_1", "ManagerAccountCollection", "ManagerCollection", "ManagerNetworkProtocol.v1_12_0", "Memory.v1_23_0", "MemoryCollection", "Message.v1_1_1",
	"MessageRegistryFile.v1_1_3", "MessageRegistryFileCollection", "Processor.v1_22_0",
	"ProcessorCollection", "Role.v1_3_1", "RoleCollection", "SecureBoot.v1_1_2", "ServiceRoot.v1_20_0", "Session.v1_8_0",
	"SessionCollection", "SessionService.v1_2_0", "Settings.v1_4_0", "SimpleStorage.v1_3_2",
	"SimpleStorageCollection", "SoftwareInventory.v1_13_0", "SoftwareInventoryCollection", "Storage.v1_21_0", "StorageCollection", "StorageController.v1_7_0",
	"StorageControllerCollection", "Task.v1_7_4", "TaskCollection", "TaskService.v1_3_0",
	"UpdateService.v1_17_0", "VirtualMedia.v1_6_5", "VirtualMediaCollection", "VolumeCollection",
}

// getMetadata serves the OData CSDL metadata document.
func (s *Server) getMetadata(c echo.Context) error {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">` + "\n")
	for _, ns := range servedTypes {
		base, _, versioned := strings.Cut(ns, ".")
		b.WriteString(`  <edmx:Reference Uri="http://redfish.dmtf.org/schemas/v1/` + base + `_v1.xml">` + "\n")
		b.WriteString(`    <edmx:Include Namespace="` + base + `"/>` + "\n")
		if versioned {
			b.WriteString(`    <edmx:Include Namespace="` + ns + `"/>` + "\n")
		}
		b.WriteString("  </edmx:Reference>\n")
	}
	b.WriteString(`  <edmx:DataServices>
    <Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="Service">
      <EntityContainer Name="Service" Extends="ServiceRoot.v1_20_0.ServiceContainer"/>
    </Schema>
  </edmx:DataServices>
</edmx:Edmx>
`)
	if c.Request().Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationXML)
		return c.NoContent(http.StatusOK)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationXML, []byte(b.String()))
}
