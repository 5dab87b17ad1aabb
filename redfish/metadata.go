package redfish

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// getMetadata serves the OData CSDL metadata document: it references the
// DMTF CSDL files of every @odata.type namespace the resources serve
// ([Server.servedTypes]; a test checks them against a crawl).
func (s *Server) getMetadata(c echo.Context) error {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">` + "\n")
	for _, ns := range s.servedTypes {
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
