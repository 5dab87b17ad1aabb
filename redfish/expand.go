package redfish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// $expand (DSP0266 "Query parameters"): one level of expansion, the most
// ProtocolFeaturesSupported.ExpandQuery advertises (MaxLevels 1).
// OpenStack Ironic's sensor collection asks for $expand=.($levels=1) on
// the Chassis and Storage collections and gets nothing on a 501.
//
//	.  every hyperlink outside Links (a collection's Members, a system's
//	   Processors, Bios, ...) is replaced by the resource it names
//	*  every hyperlink, Links included
//	~  only the hyperlinks in Links
//
// each optionally followed by ($levels=1). $levels above 1 is refused
// with 501 QueryNotSupported, any other value with 400.
//
// A hyperlink is expanded by running the GET handler of the route it names
// in-process, as the caller: the same principal (so the same scope: a
// system outside it stays a link, exactly as its GET answers 404), the
// same request context and deadline, no conditional headers and no query
// (an expanded resource is not expanded again). Each expanded resource is
// its GET's body, @odata.etag included; the answer's own ETag is the
// digest of the whole expanded body. A handler reads what its GET reads,
// through the cache: a collection of N systems expanded costs N cache
// reads, no apiserver request. $top and $skip page a collection before
// its members are expanded, and an expanded collection answers at most
// maxExpandedMembers members at a time, the rest behind
// Members@odata.nextLink (as $top pages it): an answer's size does not
// grow with the fleet. An expansion is a read ([ReadShare]): it runs in
// one of the server's read slots, so a user's concurrent expansions beyond
// its share wait behind each other, not in memory.

const queryExpand = "$expand"

// maxExpandedMembers is the most members an expanded collection's answer
// holds (~2.6 KB each for Systems: ~260 KB an answer).
const maxExpandedMembers = 100

// expandMode is which hyperlinks an $expand replaces.
type expandMode byte

const (
	expandNoLinks expandMode = '.'
	expandAll     expandMode = '*'
	expandLinks   expandMode = '~'
)

// expandKey holds the request's *expansion (set by [Server.expandQuery]).
const expandKey = "redfish.expand"

// parseExpand reads $expand: "." "*" or "~", optionally with "($levels=1)".
func parseExpand(vals []string) (expandMode, error) {
	v := strings.Join(vals, ",")
	bad := newError(http.StatusBadRequest, msg("QueryParameterValueFormatError", nil, v, queryExpand))
	if len(vals) != 1 || v == "" {
		return 0, bad
	}
	mode := expandMode(v[0])
	if mode != expandNoLinks && mode != expandAll && mode != expandLinks {
		return 0, bad
	}
	rest := v[1:]
	if rest == "" {
		return mode, nil
	}
	levels, ok := strings.CutPrefix(rest, "($levels=")
	levels, closed := strings.CutSuffix(levels, ")")
	if !ok || !closed {
		return 0, bad
	}
	n, err := strconv.Atoi(levels)
	switch {
	case err != nil || n < 1 || strings.ContainsAny(levels, "+-"):
		return 0, bad
	case n > 1:
		m := msg("QueryNotSupported", nil)
		m.Resolution = "Use $levels=1: the service expands one level (ProtocolFeaturesSupported.ExpandQuery.MaxLevels)."
		return 0, newError(http.StatusNotImplemented, m)
	}
	return mode, nil
}

// expansion is one request's $expand.
type expansion struct {
	s    *Server
	mode expandMode
	// done are the resources already expanded in this answer, by URI.
	done map[string]json.RawMessage
}

// expandQuery marks a GET or HEAD with $expand (validated by
// [checkQuery]) for [send] to expand.
func (s *Server) expandQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		vals, ok := c.QueryParams()[queryExpand]
		if !ok {
			return next(c)
		}
		mode, err := parseExpand(vals)
		if err != nil {
			return err
		}
		c.Set(expandKey, &expansion{s: s, mode: mode, done: map[string]json.RawMessage{}})
		return next(c)
	}
}

// expandBody applies the request's $expand, if any, to body.
func expandBody(c echo.Context, body obj) (obj, error) {
	x, ok := c.Get(expandKey).(*expansion)
	if !ok {
		return body, nil
	}
	out, err := x.walk(c, body, false)
	if err != nil {
		return nil, err
	}
	return out.(obj), nil // walk keeps an object an object
}

// walk returns v with the hyperlinks of x.mode replaced by their
// resources; inLinks is whether v is inside a Links object. It copies
// what it changes: a body may share objects with others.
func (x *expansion) walk(c echo.Context, v any, inLinks bool) (any, error) {
	switch v := v.(type) {
	case obj:
		if uri, ok := hyperlink(v); ok {
			if x.mode == expandAll || (x.mode == expandLinks) == inLinks {
				return x.resource(c, uri, v)
			}
			return v, nil
		}
		out := make(obj, len(v))
		for k, e := range v {
			w, err := x.walk(c, e, inLinks || k == "Links")
			if err != nil {
				return nil, err
			}
			out[k] = w
		}
		return out, nil
	case []obj:
		return walkEach(x, c, v, inLinks)
	case []any:
		return walkEach(x, c, v, inLinks)
	}
	return v, nil
}

// walkEach is [expansion.walk] of every element of a list.
func walkEach[E any](x *expansion, c echo.Context, v []E, inLinks bool) (any, error) {
	out := make([]any, len(v))
	for i, e := range v {
		w, err := x.walk(c, e, inLinks)
		if err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}

// hyperlink reports whether o is a reference to a resource of the
// service: {"@odata.id": "/redfish/v1/..."} and nothing else.
func hyperlink(o obj) (string, bool) {
	if len(o) != 1 {
		return "", false
	}
	uri, ok := o["@odata.id"].(string)
	if !ok || !strings.HasPrefix(uri, "/redfish/v1/") || strings.ContainsAny(uri, "#?") {
		return "", false
	}
	return uri, true
}

// resource is the body GET uri answers the caller, or link unchanged when
// there is none to show: a route without GET, a GET the caller is refused
// (4xx: a member gone since the collection was listed, a system outside
// the caller's scope), an answer other than 200. A server error (the
// backend unavailable) fails the whole answer, as it would fail that GET.
func (x *expansion) resource(c echo.Context, uri string, link obj) (any, error) {
	if b, ok := x.done[uri]; ok {
		if b == nil {
			return link, nil
		}
		return b, nil
	}
	b, err := x.s.read(c, uri)
	if err != nil {
		return nil, fmt.Errorf("expand %s: %w", uri, err)
	}
	x.done[uri] = b
	if b == nil {
		return link, nil
	}
	return b, nil
}

// route is a GET handler as registered, before authentication and query
// checks.
type route struct {
	h      echo.HandlerFunc
	public bool
}

// read runs the GET handler of uri in-process as c's caller and returns
// its JSON body, nil when there is nothing to show (see
// [expansion.resource]).
func (s *Server) read(c echo.Context, uri string) (json.RawMessage, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, nil // not a link the service could have made: shown as is
	}
	req, err := http.NewRequestWithContext(c.Request().Context(), http.MethodGet, u.Path, nil)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", uri, err)
	}
	rec := &recorder{header: http.Header{}}
	sub := s.echo.NewContext(req, rec)
	s.echo.Router().Find(http.MethodGet, u.Path, sub)
	p := sub.Path()
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	r, ok := s.reads[p]
	if !ok {
		return nil, nil
	}
	if pr, ok := c.Get(principalKey).(*auth.Principal); ok {
		sub.Set(principalKey, pr)
	} else if !r.public {
		return nil, nil // never reached: an $expand is authenticated
	}
	if err := r.h(sub); err != nil {
		if classify(err, http.MethodGet, u.Path, "").Status < http.StatusInternalServerError {
			return nil, nil // what that GET refuses the caller (404, 403) stays a link
		}
		return nil, err
	}
	if rec.status != http.StatusOK || !json.Valid(rec.body.Bytes()) {
		return nil, nil
	}
	return bytes.TrimSpace(rec.body.Bytes()), nil
}

// recorder is the ResponseWriter of an in-process GET.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b) // bytes.Buffer's Write never fails
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// authenticatedToExpand authenticates a public GET that asks for $expand
// (the service root's links lead to resources that are not public):
// without credentials it answers 401, like those resources.
func (s *Server) authenticatedToExpand(next echo.HandlerFunc) echo.HandlerFunc {
	authenticated := s.authenticated(next)
	return func(c echo.Context) error {
		if c.QueryParams().Has(queryExpand) {
			return authenticated(c)
		}
		return next(c)
	}
}
