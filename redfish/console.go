package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Consoles is the graphical console (package vncconsole) as the Manager
// needs it: what it advertises, where its page is, and the one-time
// tokens the page's WebSocket presents.
type Consoles interface {
	// GraphicalConsole says whether the console is served and how many
	// consoles of one System may be open at once.
	GraphicalConsole() (enabled bool, maxSessions int)
	// PageURI is the console page of System id.
	PageURI(id string) string
	// Issue returns a one-time token for a console of System id, granted
	// to session of user (view-only: the screen without input).
	Issue(session, user, id string, viewOnly bool) (string, error)
	// SessionEnded ends the open consoles of a logged-out session.
	SessionEnded(session string)
}

// consoleTokenAction is the Manager's OEM action that issues a console
// token: the page posts it with its session's X-Auth-Token.
const consoleTokenAction = "RedfishBridge.ConsoleToken"

// graphicalConsole is the Manager's GraphicalConsole property.
func (s *Server) graphicalConsole() obj {
	enabled, maxSessions := false, 0
	if s.b.Consoles != nil {
		enabled, maxSessions = s.b.Consoles.GraphicalConsole()
	}
	return obj{"ServiceEnabled": enabled, "MaxConcurrentSessions": maxSessions, "ConnectTypesSupported": []string{"KVMIP"}}
}

// consoleLinks are the Manager's Actions and Oem properties that lead a
// client to the console: the page, and the action issuing its token.
func (s *Server) consoleLinks(uri, id string, body obj) {
	if s.b.Consoles == nil {
		return
	}
	if enabled, _ := s.b.Consoles.GraphicalConsole(); !enabled {
		return
	}
	body["Actions"] = obj{"Oem": obj{"#" + consoleTokenAction: obj{"target": uri + "/Actions/Oem/" + consoleTokenAction}}}
	body["Oem"] = obj{"RedfishBridge": obj{"GraphicalConsolePage": s.b.Consoles.PageURI(id)}}
}

// issueConsoleToken answers the console token action: for a Redfish
// session only (a token outlives no session), for a System in the
// caller's scope (else 404, as every resource of it), view-only for a
// ReadOnly caller.
func (s *Server) issueConsoleToken(c echo.Context) error {
	v, err := s.system(c)
	if err != nil {
		return err
	}
	if s.b.Consoles == nil {
		return fmt.Errorf("graphical console of %s: %w", v.Key, ErrNotFound)
	}
	if enabled, _ := s.b.Consoles.GraphicalConsole(); !enabled {
		return fmt.Errorf("graphical console of %s: %w", v.Key, ErrNotFound)
	}
	p := principal(c)
	if p.Session == "" {
		m := msg("InsufficientPrivilege", nil)
		m.Resolution = "Open the console with a Redfish session (POST " + sessionsURI + "), not Basic credentials: a console ends with its session."
		return newError(http.StatusForbidden, m)
	}
	viewOnly := roleOf(p) == roleReadOnly
	tok, err := s.b.Consoles.Issue(p.Session, p.User, v.Key.ID(), viewOnly)
	if err != nil {
		return fmt.Errorf("console token for %s: %w", v.Key, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return send(c, http.StatusOK, obj{"Token": tok, "ViewOnly": viewOnly})
}
