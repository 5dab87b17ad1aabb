package redfish

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// HeaderAuthToken carries the session token.
const HeaderAuthToken = "X-Auth-Token" //nolint:gosec // G101: a header's name, not a credential

const principalKey = "redfish.principal"

// authenticated requires a session token or Basic credentials.
func (s *Server) authenticated(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := req.Context()
		var p auth.Principal
		var err error
		if tok := req.Header.Get(HeaderAuthToken); tok != "" {
			p, err = s.b.Auth.Token(ctx, tok)
			if errors.Is(err, auth.ErrInvalidToken) {
				return &Error{Status: http.StatusUnauthorized, Messages: []Message{msg("NoValidSession", nil)}, Cause: err}
			}
		} else if user, pass, ok := req.BasicAuth(); ok {
			p, err = s.b.Auth.Password(ctx, peerIP(req), user, pass)
			if errors.Is(err, auth.ErrBadCredentials) {
				return &Error{Status: http.StatusUnauthorized, Messages: []Message{msg("AccessDenied", nil, req.URL.Path)}, Cause: err}
			}
		} else {
			return newError(http.StatusUnauthorized, msg("NoValidSession", nil))
		}
		if err != nil {
			return fmt.Errorf("authenticate: %w", err)
		}
		c.Set(principalKey, &p)
		s.authenticatedHook(ctx, p.User)
		return next(c)
	}
}

// authenticatedHook calls [Config.Authenticated], if set.
func (s *Server) authenticatedHook(ctx context.Context, user string) {
	if s.cfg.Authenticated != nil {
		s.cfg.Authenticated(ctx, user)
	}
}

// principal is the authenticated caller.
func principal(c echo.Context) auth.Principal {
	if p, ok := c.Get(principalKey).(*auth.Principal); ok {
		return *p
	}
	return auth.Principal{}
}

// loginUserKey names the user of a login (not authenticated as a
// principal) for the access log.
const loginUserKey = "redfish.login.user"

// userOf is the request's user for the access log: the principal's, or
// the one logging in; "" when neither.
func userOf(c echo.Context) string {
	if p, ok := c.Get(principalKey).(*auth.Principal); ok {
		return p.User
	}
	user, _ := c.Get(loginUserKey).(string)
	return user
}

// peerIP is the TCP peer's address: never a header the client controls.
func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// system resolves the :id path parameter to a system in the caller's scope.
// Anything else (malformed id, unknown VM, VM out of scope) is 404.
func (s *Server) system(c echo.Context) (SystemView, error) {
	key, scope, err := systemKey(c)
	if err != nil {
		return SystemView{}, err
	}
	return s.systemInScope(c, key, scope)
}

// systemKey parses the :id path parameter into a key in a namespace of the
// caller's scope (404 otherwise) and returns that scope.
func systemKey(c echo.Context) (system.Key, auth.Scope, error) {
	id := c.Param("id")
	key, err := system.ParseID(id)
	if err != nil {
		return system.Key{}, auth.Scope{}, fmt.Errorf("system %q: %w: %w", id, ErrNotFound, err)
	}
	scope := principal(c).Scope
	if !scope.AllowsNamespace(key.Namespace) {
		return system.Key{}, auth.Scope{}, errOutOfScope(key)
	}
	return key, scope, nil
}

// systemInScope reads system key and checks it against scope (its labels).
func (s *Server) systemInScope(c echo.Context, key system.Key, scope auth.Scope) (SystemView, error) {
	v, err := s.b.Systems.Get(c.Request().Context(), key)
	if err != nil {
		return SystemView{}, fmt.Errorf("get system %s: %w", key, err)
	}
	if !scope.Allows(v.Key, v.Labels) {
		return SystemView{}, errOutOfScope(key)
	}
	return v, nil
}

// errOutOfScope is a system the caller may not see: 404, like a missing one.
func errOutOfScope(key system.Key) error {
	return fmt.Errorf("system %s: out of scope: %w", key, ErrNotFound)
}

// systems lists the systems in the caller's scope.
func (s *Server) systems(c echo.Context) ([]SystemView, error) {
	scope := principal(c).Scope
	all, err := s.b.Systems.List(c.Request().Context(), scope)
	if err != nil {
		return nil, fmt.Errorf("list systems: %w", err)
	}
	out := all[:0:0]
	for _, v := range all {
		if scope.Allows(v.Key, v.Labels) {
			out = append(out, v)
		}
	}
	return out, nil
}
