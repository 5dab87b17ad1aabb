package redfish

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// obj is a JSON object being built.
type obj = map[string]any

// maxBodyBytes bounds request bodies (the largest legitimate one, a PATCH
// of BIOS attributes, is well under 1 KiB).
const maxBodyBytes = 64 << 10

// HeaderRequestID carries the request id, taken from the client if sane.
const HeaderRequestID = "X-Request-Id"

// everyAnswer are the constant headers of every answer, by canonical name.
// The value slices are shared by all answers: never modify one (net/http
// and echo only read them; Set replaces a slice, Add copies it).
var everyAnswer = map[string][]string{
	"Odata-Version":          {odataVersion},
	"Cache-Control":          {"no-store"},
	"X-Content-Type-Options": {"nosniff"},
}

// protocol sets what every answer carries (OData-Version, request id,
// Connection: close when asked) and logs one line per request at
// [accessLevel].
func (s *Server) protocol(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req, h := c.Request(), c.Response().Header()
		id := req.Header.Get(HeaderRequestID)
		if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r > '~' }) {
			id = newRequestID()
		}
		h.Set(HeaderRequestID, id)
		for k, v := range everyAnswer {
			h[k] = v
		}
		if req.Close || strings.EqualFold(req.Header.Get("Connection"), "close") {
			// net/http closes the connection after this answer.
			h.Set("Connection", "close")
		}
		base := s.cfg.Logger
		if base == nil {
			base = logctx.From(req.Context())
		}
		log := logctx.With(base, slog.String("request", id), slog.String("method", req.Method), slog.String("path", req.URL.Path))
		ctx, cancel := logctx.Into(req.Context(), log), context.CancelFunc(func() {})
		if !s.streamed[c.Path()] { // a stream lasts as long as its client reads
			ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		}
		defer cancel()
		c.SetRequest(req.WithContext(ctx))
		start := time.Now()
		if req.Method == http.MethodGet || req.Method == http.MethodHead {
			s.setAllow(c)
		}
		err := checkODataVersion(req)
		if err == nil {
			err = next(c)
		}
		if err != nil {
			c.Error(err)
		}
		user := userOf(c)
		took := time.Since(start)
		status := c.Response().Status
		if lvl := accessLevel(req.Method, status); log.Enabled(ctx, lvl) {
			log.LogAttrs(ctx, lvl, "request", slog.Int("status", status), slog.String("user", user),
				slog.String("remote", req.RemoteAddr), slog.Duration("duration", took.Round(time.Microsecond)))
		}
		if s.cfg.Observe != nil {
			s.cfg.Observe(req.Method, s.routeOf(c), c.Response().Status, took)
		}
		return nil
	}
}

// accessLevel is the level of a request's access-log line: reads that
// succeeded are Debug (Ironic polls every system; one Info line per GET
// cost more than the GET itself), errors (status >= 400) and anything
// that may write (every method but GET and HEAD) stay Info.
func accessLevel(method string, status int) slog.Level {
	if status >= http.StatusBadRequest || (method != http.MethodGet && method != http.MethodHead) {
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// odataVersion is the one OData version the service speaks.
const odataVersion = "4.0"

// checkODataVersion refuses a request that asks for another OData version
// than [odataVersion] (412, as the Redfish specification requires).
func checkODataVersion(req *http.Request) error {
	v, ok := req.Header["Odata-Version"]
	if !ok || len(v) == 1 && strings.TrimSpace(v[0]) == odataVersion {
		return nil
	}
	m := msg("GeneralError", nil)
	m.Resolution = "The service supports OData-Version " + odataVersion + " only: send that or no OData-Version header."
	return newError(http.StatusPreconditionFailed, m)
}

// routeOf is the matched route template without a trailing slash, or ""
// when the request matched none of the service's routes (a 404 path, or
// a prefix echo's router stopped at), so that metrics labels come from the
// closed set of route templates.
func (s *Server) routeOf(c echo.Context) string {
	p := c.Path()
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	if _, ok := s.allow[p]; !ok {
		return ""
	}
	return p
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// limitBody refuses bodies over maxBodyBytes (413) and caps the reader.
func limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == http.NoBody {
			return next(c) // net/http's body of a request without one
		}
		if req.ContentLength > maxBodyBytes {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge)
		}
		req.Body = http.MaxBytesReader(c.Response(), req.Body, maxBodyBytes)
		return next(c)
	}
}

// readBody returns the request body as a JSON object, or nil if there is no
// body. A body must be JSON (415 otherwise) and an object (400).
func readBody(c echo.Context) (map[string]json.RawMessage, error) {
	raw, err := io.ReadAll(c.Request().Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge)
	case err != nil:
		return nil, newError(http.StatusBadRequest, msg("MalformedJSON", nil))
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	if ct := c.Request().Header.Get(echo.HeaderContentType); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != echo.MIMEApplicationJSON {
			m := msg("UnrecognizedRequestBody", nil)
			m.Resolution = "Send the body as application/json."
			return nil, newError(http.StatusUnsupportedMediaType, m)
		}
	} else {
		m := msg("UnrecognizedRequestBody", nil)
		m.Resolution = "Send the body with Content-Type: application/json."
		return nil, newError(http.StatusUnsupportedMediaType, m)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		return nil, newError(http.StatusBadRequest, msg("MalformedJSON", nil))
	}
	if key, dup := duplicateKey(raw); dup {
		return nil, newError(http.StatusBadRequest, msg("PropertyDuplicate", []string{key}, strings.TrimPrefix(key, "#/")))
	}
	return body, nil
}

// requireBody is readBody for requests that must have one.
func requireBody(c echo.Context) (map[string]json.RawMessage, error) {
	body, err := readBody(c)
	if err == nil && body == nil {
		err = newError(http.StatusBadRequest, msg("MalformedJSON", nil))
	}
	return body, err
}

// etag is the weak ETag of a resource at version.
func etag(version string) string { return `W/"` + version + `"` }

// bodyVersion is the version of one rendered resource: a digest of its
// JSON (without @odata.etag), so a resource's ETag changes exactly when
// that resource changes, not when an unrelated part of the same VM does
// (an import finishing must not invalidate the ComputerSystem's ETag).
// encoding/json sorts map keys, so equal bodies digest equally.
func bodyVersion(body obj) string {
	_, version := encodeVersioned(body)
	return version
}

// encodeVersioned is body's JSON without @odata.etag and [bodyVersion] of
// it ("" when body does not encode).
func encodeVersioned(body obj) ([]byte, string) {
	if _, ok := body["@odata.etag"]; ok {
		clean := make(obj, len(body))
		for k, v := range body {
			if k != "@odata.etag" {
				clean[k] = v
			}
		}
		body = clean
	}
	b, err := marshalResource(body)
	if err != nil {
		return nil, ""
	}
	return b, digest(b)
}

// digest is the short hex SHA-256 of an encoded resource.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// checkIfMatch enforces If-Match against version ([matchesETag]). No
// header passes.
func checkIfMatch(c echo.Context, version string) error {
	h := c.Request().Header.Get("If-Match")
	if h == "" || matchesETag(h, version) {
		return nil
	}
	return newError(http.StatusPreconditionFailed, msg("PreconditionFailed", nil))
}

// send writes body with status: a collection paged as the query asks
// ([page]), then expanded as it asks ([expandBody]), encoded once
// ([encodeResource]) and described ([sendEncoded]): every resource
// carries its ETag.
func send(c echo.Context, status int, body obj) error {
	if err := page(c, body); err != nil {
		return err
	}
	body, err := expandBody(c, body)
	if err != nil {
		return err
	}
	_, pretty := c.QueryParams()["pretty"]
	b, version, err := encodeResource(body, pretty)
	if err != nil {
		return fmt.Errorf("encode %s: %w", c.Request().URL.Path, err)
	}
	ot, _ := body["@odata.type"].(string)
	return sendEncoded(c, status, ot, b, version)
}

// errUnencodable is a rendered body that encoding/json refused.
var errUnencodable = errors.New("body does not encode as JSON")

// encodeResource is body as sent, and its version when it is a resource
// (has an @odata.id; "" otherwise). A resource's ETag, [bodyVersion] of
// the body, is its @odata.etag, written in front of the encoded body so
// that the body is encoded once: the digest is of those bytes (JSON member
// order does not matter; encoding/json would have sorted it first anyway,
// before "@odata.id"). pretty (?pretty) indents it.
func encodeResource(body obj, pretty bool) ([]byte, string, error) {
	b, version := encodeVersioned(body)
	if version == "" {
		return nil, "", errUnencodable
	}
	if _, resource := body["@odata.id"]; !resource {
		version = ""
	}
	if pretty {
		if version != "" {
			body["@odata.etag"] = etag(version)
		}
		out, err := json.MarshalIndent(body, "", "  ")
		return append(out, '\n'), version, err
	}
	if version == "" {
		return append(b, '\n'), "", nil
	}
	quoted, _ := json.Marshal(etag(version)) // a string always marshals
	out := make([]byte, 0, len(b)+len(quoted)+len(`{"@odata.etag":,`)+1)
	out = append(out, `{"@odata.etag":`...)
	out = append(out, quoted...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, b[1:]...)
	return append(out, '\n'), version, nil
}

// sendJSON writes encoded JSON (headers only for HEAD).
func sendJSON(c echo.Context, status int, b []byte) error {
	c.Response().Header()[echo.HeaderContentType] = jsonContentType
	if c.Request().Method == http.MethodHead {
		return c.NoContent(status)
	}
	return c.Blob(status, echo.MIMEApplicationJSON, b)
}

// jsonContentType is the Content-Type of JSON answers (shared, like
// [everyAnswer]'s values; echo's Blob keeps a Content-Type already set).
var jsonContentType = []string{echo.MIMEApplicationJSON}

// link is a navigation link.
func link(uri string) obj { return obj{"@odata.id": uri} }

// collection builds a resource collection: [linkedCollection] with one
// link map per member, which [send]'s query handling ($top/$skip, $expand)
// reads and replaces.
func collection(uri, odataType, name string, members []string) obj {
	ms := make([]obj, len(members))
	for i, m := range members {
		ms[i] = link(m)
	}
	c := linkedCollection(uri, odataType, name, members)
	c["Members"] = ms
	return c
}

// statusOK is a Status of an enabled, healthy resource.
func statusOK() obj { return obj{"State": "Enabled", "Health": "OK"} }
