package redfish

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// Query parameters: the service pages collections with $top and $skip
// (ProtocolFeaturesSupported.TopSkipQuery) and expands one level with
// $expand (ExpandQuery, expand.go), on GET and HEAD only (400
// QueryNotSupportedOnOperation on other methods), and implements no other
// Redfish query. Any other parameter that starts with "$", and only and
// excerpt, are refused with 501 QueryNotSupported rather than ignored, so
// a client never reads an unfiltered answer as the one it asked for.
// Other parameters are ignored, as the specification requires.

const (
	queryTop  = "$top"
	querySkip = "$skip"
)

// refusedQueries are Redfish query parameters without a "$".
var refusedQueries = []string{"only", "excerpt"}

// checkQuery validates the query string before the handler runs (a
// refused query must not have run an action first).
func checkQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.URL.RawQuery == "" {
			return next(c)
		}
		q, err := url.ParseQuery(req.URL.RawQuery)
		if err != nil {
			m := msg("GeneralError", nil)
			m.Resolution = "Percent-encode the query string."
			return newError(http.StatusBadRequest, m)
		}
		readOnly := false
		for name, vals := range q {
			switch {
			case name == queryTop || name == querySkip:
				readOnly = true
				if _, err := pageParam(name, vals); err != nil {
					return err
				}
			case name == queryExpand:
				readOnly = true
				if _, err := parseExpand(vals); err != nil {
					return err
				}
			case strings.HasPrefix(name, "$") || slices.Contains(refusedQueries, name):
				m := msg("QueryNotSupported", nil)
				m.Resolution = "Remove " + name + ": the service implements only $top and $skip, on collections, and $expand with $levels=1."
				return newError(http.StatusNotImplemented, m)
			}
		}
		if readOnly && req.Method != http.MethodGet && req.Method != http.MethodHead {
			return newError(http.StatusBadRequest, msg("QueryNotSupportedOnOperation", nil))
		}
		return next(c)
	}
}

// pageParam reads $top or $skip: one non-negative decimal integer.
func pageParam(name string, vals []string) (int, error) {
	v := strings.Join(vals, ",")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || len(vals) != 1 || strings.ContainsAny(v, "+-") {
		return 0, newError(http.StatusBadRequest, msg("QueryParameterValueFormatError", nil, v, name))
	}
	return n, nil
}

// page applies $top and $skip (validated by [checkQuery]) to a collection:
// Members keeps the requested window, Members@odata.count stays the total
// and Members@odata.nextLink names the next window while members remain
// after a non-empty one. An expanded collection's window holds at most
// [maxExpandedMembers] members, with or without $top: its next window is
// the nextLink's.
// On a resource that is not a collection they are refused (400).
func page(c echo.Context, body obj) error {
	q := c.QueryParams()
	_, expanding := c.Get(expandKey).(*expansion)
	paging := q.Has(queryTop) || q.Has(querySkip)
	if !paging && !expanding {
		return nil
	}
	members, ok := body["Members"].([]obj)
	if !ok {
		if !paging {
			return nil // an expanded resource that is not a collection
		}
		return newError(http.StatusBadRequest, msg("QueryNotSupportedOnResource", nil))
	}
	start, end, top := pageWindow(q, len(members))
	if expanding && end-start > maxExpandedMembers {
		end, top = start+maxExpandedMembers, maxExpandedMembers
	}
	body["Members"] = members[start:end]
	uri, _ := body["@odata.id"].(string)
	if next := pageNextLink(q, uri, start, end, len(members), top); next != "" {
		body["Members@odata.nextLink"] = next
	}
	return nil
}

// pageWindow is the window [start, end) of n members that $top and $skip
// (validated by [checkQuery]) ask for, and the $top read.
func pageWindow(q url.Values, n int) (start, end, top int) {
	skip, top := 0, n
	if q.Has(querySkip) {
		skip, _ = pageParam(querySkip, q[querySkip])
	}
	if q.Has(queryTop) {
		top, _ = pageParam(queryTop, q[queryTop])
	}
	start = min(skip, n)
	end = start + min(top, n-start)
	return start, end, top
}

// pageNextLink is the Members@odata.nextLink of the window [start, end) of
// n members of the collection at uri: "" unless members remain after a
// non-empty window (a window of $top=0 has no next one: its link would be
// itself).
func pageNextLink(q url.Values, uri string, start, end, n, top int) string {
	if end >= n || end <= start {
		return ""
	}
	next := uri + "?" + querySkip + "=" + strconv.Itoa(end)
	if q.Has(queryTop) {
		next += "&" + queryTop + "=" + strconv.Itoa(top)
	}
	if q.Has(queryExpand) {
		// The next window is expanded alike.
		next += "&" + queryExpand + "=" + url.QueryEscape(q.Get(queryExpand))
	}
	return next
}
