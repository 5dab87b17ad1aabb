package redfish

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// allowedMethods maps each route template (without a trailing slash) to
// its Allow header value, in echo's form ("OPTIONS, " and the methods
// sorted), so the header on GET and HEAD and the one on 405 agree. The
// values are shared by all answers: never modify one.
func allowedMethods(routes []*echo.Route) map[string][]string {
	methods := map[string][]string{}
	for _, r := range routes {
		p := r.Path
		if len(p) > 1 {
			p = strings.TrimSuffix(p, "/")
		}
		if !slices.Contains(methods[p], r.Method) {
			methods[p] = append(methods[p], r.Method)
		}
	}
	out := make(map[string][]string, len(methods))
	for p, ms := range methods {
		slices.Sort(ms)
		out[p] = []string{strings.Join(append([]string{http.MethodOptions}, ms...), ", ")}
	}
	return out
}

// setAllow sets the Allow header of the matched route, if any.
func (s *Server) setAllow(c echo.Context) {
	p := c.Path()
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	if allow, ok := s.allow[p]; ok {
		c.Response().Header()[echo.HeaderAllow] = allow
	}
}

// schemaURI is the published JSON schema of a resource of odataType:
// "#ComputerSystem.v1_27_0.ComputerSystem" is described by
// .../ComputerSystem.v1_27_0.json, a collection type by its unversioned
// file. "" for a type without a namespace.
func schemaURI(odataType string) string {
	t := strings.TrimPrefix(odataType, "#")
	i := strings.LastIndex(t, ".")
	if i <= 0 {
		return ""
	}
	return dmtfSchemas + t[:i] + ".json"
}

// describedBy is the Link header value naming the schema of odataType,
// nil without one. The values are kept (@odata.type is one of the
// service's constants) and shared by all answers: never modify one.
func describedBy(odataType string) []string {
	if l, ok := describedByLinks.Load(odataType); ok {
		return l.([]string) // only []string are stored
	}
	var l []string
	if uri := schemaURI(odataType); uri != "" {
		l = []string{"<" + uri + ">; rel=describedby"}
	}
	describedByLinks.Store(odataType, l)
	return l
}

// describedByLinks maps @odata.type to its [describedBy] value.
var describedByLinks sync.Map

// dmtfSchemas is where the DMTF publishes the Redfish JSON schemas.
const dmtfSchemas = "http://redfish.dmtf.org/schemas/v1/"

// sendEncoded writes an encoded body (headers only for HEAD) with the Link
// to the schema of odataType (rel=describedby) and, for a resource
// (version set), its ETag; a GET or HEAD that would answer 200 and names
// that ETag in If-None-Match answers 304 Not Modified.
func sendEncoded(c echo.Context, status int, odataType string, b []byte, version string) error {
	h := c.Response().Header()
	if link := describedBy(odataType); link != nil {
		h["Link"] = link
	}
	if version != "" {
		h.Set("ETag", etag(version))
		m := c.Request().Method
		if status == http.StatusOK && (m == http.MethodGet || m == http.MethodHead) &&
			matchesETag(c.Request().Header.Get("If-None-Match"), version) {
			return c.NoContent(http.StatusNotModified)
		}
	}
	return sendJSON(c, status, b)
}

// matchesETag reports whether a precondition header (If-Match or
// If-None-Match) names version: weak and strong forms of the same tag
// match (sushy retries weak, then strong, then none) and so does "*".
func matchesETag(header, version string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == `"`+version+`"` {
			return true
		}
	}
	return false
}
