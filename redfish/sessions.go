package redfish

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// Sessions are self-validating signed tokens (see [auth]): the collection
// shows only the caller's own session, and a session can be read or deleted
// only with its own token. Other sessions are 404.

const (
	sessionServiceURI = "/redfish/v1/SessionService"
	sessionsURI       = sessionServiceURI + "/Sessions"
)

func (s *Server) getSessionService(c echo.Context) error {
	return send(c, http.StatusOK, obj{
		"@odata.id":      sessionServiceURI,
		"@odata.type":    "#SessionService.v1_2_0.SessionService",
		"Id":             "SessionService",
		"Name":           "Session Service",
		"ServiceEnabled": true,
		"SessionTimeout": int(s.b.Auth.SessionTTL().Seconds()),
		"Sessions":       link(sessionsURI),
		"Status":         statusOK(),
	}, "")
}

func (s *Server) listSessions(c echo.Context) error {
	var uris []string
	if sid := principal(c).Session; sid != "" {
		uris = append(uris, sessionsURI+"/"+sid)
	}
	return send(c, http.StatusOK, collection(sessionsURI, "#SessionCollection.SessionCollection", "Session Collection", uris), "")
}

func renderSession(p auth.Principal) obj {
	return obj{
		"@odata.id":   sessionsURI + "/" + p.Session,
		"@odata.type": "#Session.v1_8_0.Session",
		"Id":          p.Session,
		"Name":        "Session " + p.Session,
		"UserName":    p.User,
		"Password":    nil,
	}
}

// login opens a session: 201 with X-Auth-Token and Location.
func (s *Server) login(c echo.Context) error {
	body, err := requireBody(c)
	if err != nil {
		return err
	}
	p := newProps(body)
	user, okUser := p.str("UserName", nil)
	pass, okPass := p.str("Password", nil)
	for _, f := range []struct {
		name string
		ok   bool
	}{{"UserName", okUser}, {"Password", okPass}} {
		if !f.ok && body[f.name] == nil {
			p.add(msg("CreateFailedMissingReqProperties", []string{"#/" + f.name}, f.name))
		}
	}
	p.done(obj{"Id": nil, "Name": nil})
	if err := p.err(); err != nil {
		return err
	}
	req := c.Request()
	who, token, err := s.b.Auth.Login(req.Context(), peerIP(req), user, pass)
	if errors.Is(err, auth.ErrBadCredentials) {
		return &Error{Status: http.StatusUnauthorized, Messages: []Message{msg("AccessDenied", nil, req.URL.Path)}, Cause: err}
	}
	if err != nil {
		return fmt.Errorf("log in %q: %w", user, err)
	}
	c.Set(principalKey+".user", who.User)
	h := c.Response().Header()
	h.Set(HeaderAuthToken, token)
	h.Set(echo.HeaderLocation, sessionsURI+"/"+who.Session)
	return send(c, http.StatusCreated, renderSession(who), "")
}

// ownSession checks that :sid is the caller's session.
func ownSession(c echo.Context) (auth.Principal, error) {
	p := principal(c)
	if p.Session == "" || p.Session != c.Param("sid") {
		return auth.Principal{}, fmt.Errorf("session %q is not the caller's: %w", c.Param("sid"), ErrNotFound)
	}
	return p, nil
}

func (s *Server) getSession(c echo.Context) error {
	p, err := ownSession(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, renderSession(p), "")
}

func (s *Server) logout(c echo.Context) error {
	p, err := ownSession(c)
	if err != nil {
		return err
	}
	if err := s.b.Auth.Logout(c.Request().Context(), p); err != nil {
		return fmt.Errorf("log out session %s: %w", p.Session, err)
	}
	return c.NoContent(http.StatusNoContent)
}
