package redfish

import (
	"fmt"
	"net/http"
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

// maxMemberBodies bounds the kept collections (3 collections per distinct
// scope; users sharing a scope share the entry).
const maxMemberBodies = 3 * 64

type memberKey struct {
	uri   string
	scope string
}

type memberBody struct {
	membership uint64
	body       []byte
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

// sendMembers answers the collection at uri of one member per system in
// scope, uri/<system id>. Without query parameters the rendered
// body is kept until the membership changes.
func (s *Server) sendMembers(c echo.Context, uri, odataType, name string) error {
	scope := principal(c).Scope
	k := memberKey{uri: uri, scope: scopeKey(scope)}
	keep := c.QueryString() == ""
	membership := s.b.Systems.Membership() // before Members: a change after it moves it
	if keep {
		if e, ok := s.members.get(k, membership); ok {
			return sendEncoded(c, http.StatusOK, odataType, e.body, e.version)
		}
	}
	all, err := s.b.Systems.Members(c.Request().Context(), scope)
	if err != nil {
		return fmt.Errorf("list systems: %w", err)
	}
	uris := make([]string, 0, len(all))
	for _, m := range all {
		if scope.Allows(m.Key, m.Labels) {
			uris = append(uris, uri+"/"+m.Key.ID())
		}
	}
	coll := collection(uri, odataType, name, uris)
	if !keep {
		return send(c, http.StatusOK, coll)
	}
	body, version, err := encodeResource(coll, false)
	if err != nil {
		return fmt.Errorf("encode %s: %w", uri, err)
	}
	s.members.put(k, memberBody{membership: membership, body: body, version: version})
	return sendEncoded(c, http.StatusOK, odataType, body, version)
}
