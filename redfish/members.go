package redfish

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// The Systems, Managers and Chassis collections list one member per system
// in the caller's scope. Their rendered JSON is kept per collection and
// scope while [Systems.Membership] stays the same: with 1000 systems,
// rendering one took ~20 ms of CPU (a view of every VM, then 1000 JSON
// objects), serving the kept bytes takes what the TLS write takes.
// Beside the body the scoped, ordered member URIs are kept, under the same
// membership: a page ($top and $skip, and no other parameter) is built from
// them, its window's members only (at 10,000 systems a page of 1000 took
// ~0.9 s when every member was listed and rendered for each page).

// maxMemberBodies bounds the kept collections (3 collections per distinct
// scope; users sharing a scope share the entry).
const maxMemberBodies = 3 * 64

type memberKey struct {
	uri   string
	scope string
}

type memberBody struct {
	membership uint64
	uris       []string // the members' URIs, in order; read-only once kept
	body       []byte   // nil until a request without a query renders it
	version    string
}

// memberBodies are the kept collections. Safe for concurrent use.
type memberBodies struct {
	mu      sync.Mutex
	entries map[memberKey]memberBody
}

func (m *memberBodies) get(k memberKey, membership uint64) (memberBody, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || e.membership != membership {
		return memberBody{}, false
	}
	return e, true
}

func (m *memberBodies) put(k memberKey, e memberBody) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil || len(m.entries) >= maxMemberBodies {
		m.entries = map[memberKey]memberBody{} // rare: start over
	}
	m.entries[k] = e
}

// scopeKey names a scope: equal keys grant the same systems.
func scopeKey(s auth.Scope) string {
	sel := ""
	if s.Selector != nil {
		sel = s.Selector.String()
	}
	return strings.Join(s.Namespaces, "\x00") + "\x01" + sel
}

// pagedFromKept is whether pages are built from the kept member URIs
// (false only in the benchmark's and tests' negative control).
var pagedFromKept = true

// sendMembers answers the collection at uri of one member per system in
// scope, uri/<system id>. Without query parameters the rendered
// body is kept until the membership changes ([Server.sendKeptMembers]);
// with only $top and $skip the page is built from the kept member URIs
// ([Server.sendMembersPage]); any other query renders the whole
// collection for [send] ([Server.sendPlainMembers]).
func (s *Server) sendMembers(c echo.Context, uri, odataType, name string) error {
	scope := principal(c).Scope
	k := memberKey{uri: uri, scope: scopeKey(scope)}
	switch {
	case c.QueryString() == "":
		return s.sendKeptMembers(c, k, scope, odataType, name)
	case pagedFromKept && onlyPaging(c.QueryParams()):
		return s.sendMembersPage(c, k, scope, odataType, name)
	}
	return s.sendPlainMembers(c, uri, scope, odataType, name)
}

// sendKeptMembers answers the whole collection k with its kept body; it
// renders and keeps the body first when none is kept under the current
// membership (from the kept member URIs when a page kept them).
func (s *Server) sendKeptMembers(c echo.Context, k memberKey, scope auth.Scope, odataType, name string) error {
	membership := s.b.Systems.Membership() // before Members: a change after it moves it
	e, kept := s.members.get(k, membership)
	if kept && e.body != nil {
		return sendEncoded(c, http.StatusOK, odataType, e.body, e.version)
	}
	if !kept {
		uris, err := s.memberURIs(c, k.uri, scope)
		if err != nil {
			return err
		}
		e = memberBody{membership: membership, uris: uris}
	}
	body, version, err := encodeResource(linkedCollection(k.uri, odataType, name, e.uris), false)
	if err != nil {
		return fmt.Errorf("encode %s: %w", k.uri, err)
	}
	e.body, e.version = body, version
	s.members.put(k, e)
	return sendEncoded(c, http.StatusOK, odataType, body, version)
}

// sendMembersPage answers a $top/$skip page of the collection k from the
// kept member URIs, listing and keeping them first when none are kept
// under the current membership.
func (s *Server) sendMembersPage(c echo.Context, k memberKey, scope auth.Scope, odataType, name string) error {
	membership := s.b.Systems.Membership() // before Members: a change after it moves it
	e, kept := s.members.get(k, membership)
	if !kept {
		uris, err := s.memberURIs(c, k.uri, scope)
		if err != nil {
			return err
		}
		e = memberBody{membership: membership, uris: uris}
		s.members.put(k, e)
	}
	return sendPage(c, k.uri, odataType, name, e.uris)
}

// sendPlainMembers answers the collection at uri through [send], which
// applies the query, keeping nothing.
func (s *Server) sendPlainMembers(c echo.Context, uri string, scope auth.Scope, odataType, name string) error {
	uris, err := s.memberURIs(c, uri, scope)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, collection(uri, odataType, name, uris))
}

// memberURIs lists uri/<system id> of every system in scope, in order.
func (s *Server) memberURIs(c echo.Context, uri string, scope auth.Scope) ([]string, error) {
	all, err := s.b.Systems.Members(c.Request().Context(), scope)
	if err != nil {
		return nil, fmt.Errorf("list systems: %w", err)
	}
	uris := make([]string, 0, len(all))
	for _, m := range all {
		if scope.Allows(m.Key, m.Labels) {
			uris = append(uris, uri+"/"+m.Key.ID())
		}
	}
	return uris, nil
}

// onlyPaging is whether the query names $top or $skip and nothing else
// (no $expand, pretty or ignored parameter: those take [send]).
func onlyPaging(q url.Values) bool {
	for name := range q {
		if name != queryTop && name != querySkip {
			return false
		}
	}
	return len(q) > 0
}

// sendPage answers the $top/$skip window of the collection at uri whose
// members are uris, with the body [send] and [page] would write for the
// whole collection: only the window's members are built.
func sendPage(c echo.Context, uri, odataType, name string, uris []string) error {
	q := c.QueryParams()
	start, end, top := pageWindow(q, len(uris))
	coll := linkedCollection(uri, odataType, name, uris[start:end])
	coll["Members@odata.count"] = len(uris)
	if next := pageNextLink(q, uri, start, end, len(uris), top); next != "" {
		coll["Members@odata.nextLink"] = next
	}
	body, version, err := encodeResource(coll, false)
	if err != nil {
		return fmt.Errorf("encode %s: %w", uri, err)
	}
	return sendEncoded(c, http.StatusOK, odataType, body, version)
}

// memberLinks are a collection's Members, [{"@odata.id": uri}, ...],
// encoded as [collection]'s one map per member would be, without the maps:
// a $top=1000 page built 1000 maps and sorted each one's keys
// (BenchmarkSystemsPage), garbage that costs most at 100,000 VMs, where
// the caches' live heap keeps the collector busy.
type memberLinks []string

// appendTo appends the members as JSON; none is [].
func (m memberLinks) appendTo(b []byte) []byte {
	b = append(b, '[')
	for i, uri := range m {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"@odata.id":`...)
		b = appendString(b, uri)
		b = append(b, '}')
	}
	return append(b, ']')
}

// MarshalJSON encodes the members for encoding/json (?pretty).
func (m memberLinks) MarshalJSON() ([]byte, error) { return m.appendTo(nil), nil }

// linkedCollection is a resource collection with its Members kept as
// [memberLinks]: the collections of one member per system (the kept bodies
// and the pages of [Server.sendMembers]) are encoded so; [collection]
// builds on it.
func linkedCollection(uri, odataType, name string, members []string) obj {
	return obj{
		"@odata.id":           uri,
		"@odata.type":         odataType,
		"Name":                name,
		"Members":             memberLinks(members),
		"Members@odata.count": len(members),
	}
}
