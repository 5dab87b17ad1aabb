package redfish

import (
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// HeaderAuthToken carries the session token.
const HeaderAuthToken = "X-Auth-Token"

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
		c.Set(principalKey, p)
		c.Set(principalKey+".user", p.User)
		return next(c)
	}
}

// principal is the authenticated caller.
func principal(c echo.Context) auth.Principal {
	p, _ := c.Get(principalKey).(auth.Principal)
	return p
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
	id := c.Param("id")
	key, err := system.ParseID(id)
	if err != nil {
		return SystemView{}, fmt.Errorf("system %q: %w: %w", id, ErrNotFound, err)
	}
	scope := principal(c).Scope
	if !scope.AllowsNamespace(key.Namespace) {
		return SystemView{}, fmt.Errorf("system %s: out of scope: %w", key, ErrNotFound)
	}
	v, err := s.b.Systems.Get(c.Request().Context(), key)
	if err != nil {
		return SystemView{}, fmt.Errorf("get system %s: %w", key, err)
	}
	if !scope.Allows(v.Key, v.Labels) {
		return SystemView{}, fmt.Errorf("system %s: out of scope: %w", key, ErrNotFound)
	}
	return v, nil
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
