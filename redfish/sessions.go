package redfish

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// Sessions are self-validating signed tokens (see [auth]), recorded while
// open so that an Administrator (ConfigureManager) lists, reads and ends
// every user's sessions; any other caller sees and ends only the sessions
// of its own user. Other sessions are 404.

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
	})
}

func (s *Server) listSessions(c echo.Context) error {
	ss, err := s.visibleSessions(c)
	if err != nil {
		return err
	}
	uris := make([]string, len(ss))
	for i, o := range ss {
		uris[i] = sessionsURI + "/" + o.ID
	}
	return send(c, http.StatusOK, collection(sessionsURI, "#SessionCollection.SessionCollection", "Session Collection", uris))
}

// visibleSessions are the open sessions the caller may see: all of them
// with ConfigureManager, else its user's; the caller's own session is
// always among them.
func (s *Server) visibleSessions(c echo.Context) ([]auth.Session, error) {
	p := principal(c)
	all, err := s.b.Auth.OpenSessions(c.Request().Context())
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	admin := hasPrivilege(p, privConfigureManager)
	out := slices.DeleteFunc(all, func(o auth.Session) bool { return !admin && o.User != p.User })
	if p.Session != "" && !slices.ContainsFunc(out, func(o auth.Session) bool { return o.ID == p.Session }) {
		out = append(out, auth.Session{ID: p.Session, User: p.User, Expires: p.Expires})
	}
	return out, nil
}

// visibleSession is session :sid if the caller may see it.
func (s *Server) visibleSession(c echo.Context) (auth.Session, error) {
	ss, err := s.visibleSessions(c)
	if err != nil {
		return auth.Session{}, err
	}
	for _, o := range ss {
		if o.ID == c.Param("sid") {
			return o, nil
		}
	}
	return auth.Session{}, fmt.Errorf("session %q is not visible to %s: %w", c.Param("sid"), principal(c).User, ErrNotFound)
}

func renderSession(o auth.Session) obj {
	return obj{
		"@odata.id":   sessionsURI + "/" + o.ID,
		"@odata.type": "#Session.v1_8_0.Session",
		"Id":          o.ID,
		"Name":        "Session " + o.ID,
		"UserName":    o.User,
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
	// A login records the session (a write): a user whose write share is
	// spent is refused first, a successful login draws on it.
	if err := s.writes.check(user, time.Now()); err != nil {
		return err
	}
	who, token, err := s.b.Auth.Login(req.Context(), peerIP(req), user, pass)
	if errors.Is(err, auth.ErrBadCredentials) {
		return &Error{Status: http.StatusUnauthorized, Messages: []Message{msg("AccessDenied", nil, req.URL.Path)}, Cause: err}
	}
	if err != nil {
		return fmt.Errorf("log in %q: %w", user, err)
	}
	_ = s.writes.take(who.User, time.Now()) // this login's write is made: it counts
	c.Set(loginUserKey, who.User)
	s.authenticatedHook(req.Context(), who.User)
	h := c.Response().Header()
	h.Set(HeaderAuthToken, token)
	h.Set(echo.HeaderLocation, sessionsURI+"/"+who.Session)
	return send(c, http.StatusCreated, renderSession(auth.Session{ID: who.Session, User: who.User, Expires: who.Expires}))
}

func (s *Server) getSession(c echo.Context) error {
	o, err := s.visibleSession(c)
	if err != nil {
		return err
	}
	return send(c, http.StatusOK, renderSession(o))
}

// logout ends session :sid: the caller's own, or one it may see.
func (s *Server) logout(c echo.Context) error {
	o, err := s.visibleSession(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := principal(c)
	switch {
	case o.ID == p.Session:
		err = s.b.Auth.Logout(ctx, p)
	case p.ReadOnly:
		return errReadOnly() // its own session only
	default:
		err = s.b.Auth.End(ctx, o.ID)
	}
	if errors.Is(err, auth.ErrNoSuchSession) {
		return fmt.Errorf("log out session %s: %w: %w", o.ID, ErrNotFound, err)
	}
	if err != nil {
		return fmt.Errorf("log out session %s: %w", o.ID, err)
	}
	if s.b.Consoles != nil {
		s.b.Consoles.SessionEnded(o.ID) // its open consoles end with it
	}
	if s.b.Streams != nil {
		s.b.Streams.SessionEnded(o.ID) // and its event streams
	}
	return c.NoContent(http.StatusNoContent)
}
