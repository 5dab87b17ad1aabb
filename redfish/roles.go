package redfish

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// The predefined Redfish roles, with the privileges the DMTF privilege
// model assigns them. A user's role follows from the rights the bridge
// gives it: a user given the role ReadOnly (the users Secret's
// <user>.role) reads the systems in its scope and changes nothing (every
// write but its own logout and a view-only console is refused,
// [refuseReadOnly]); otherwise a user whose scope is every system is an
// Administrator (it may also see and end other users' sessions:
// ConfigureManager), and any other user drives the systems in its scope,
// an Operator.

const (
	rolesURI          = accountServiceURI + "/Roles"
	roleAdministrator = "Administrator"
	roleOperator      = "Operator"
	roleReadOnly      = "ReadOnly"
	// privConfigureManager lets a caller manage the service itself, here
	// other users' sessions.
	privConfigureManager = "ConfigureManager"
)

// rolePrivileges are the AssignedPrivileges of each predefined role.
var rolePrivileges = map[string][]string{
	roleAdministrator: {"Login", privConfigureManager, "ConfigureUsers", "ConfigureSelf", "ConfigureComponents"},
	roleOperator:      {"Login", "ConfigureSelf", "ConfigureComponents"},
	roleReadOnly:      {"Login", "ConfigureSelf"},
}

// roleIDs lists the roles in the collection's order.
var roleIDs = []string{roleAdministrator, roleOperator, roleReadOnly}

// roleOf is the role of an authenticated caller.
func roleOf(p auth.Principal) string {
	if p.ReadOnly {
		return roleReadOnly
	}
	if p.Scope.Unrestricted() {
		return roleAdministrator
	}
	return roleOperator
}

// hasPrivilege reports whether the caller's role grants privilege.
func hasPrivilege(p auth.Principal, privilege string) bool {
	return slices.Contains(rolePrivileges[roleOf(p)], privilege)
}

// errReadOnly is the refusal of a write to a ReadOnly caller.
func errReadOnly() error {
	m := msg("InsufficientPrivilege", nil)
	m.Resolution = "The user is ReadOnly (its role in the users Secret): it reads and changes nothing. Use an Operator's account."
	return newError(http.StatusForbidden, m)
}

// refuseReadOnly refuses a ReadOnly caller's write with 403
// InsufficientPrivilege before it is judged or drawn on any share.
func refuseReadOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if principal(c).ReadOnly {
			return errReadOnly()
		}
		return next(c)
	}
}

func roleURI(id string) string { return rolesURI + "/" + id }

func (s *Server) listRoles(c echo.Context) error {
	uris := make([]string, len(roleIDs))
	for i, id := range roleIDs {
		uris[i] = roleURI(id)
	}
	return send(c, http.StatusOK, collection(rolesURI, "#RoleCollection.RoleCollection", "Roles Collection", uris))
}

func (s *Server) getRole(c echo.Context) error {
	id := c.Param("role")
	privs, ok := rolePrivileges[id]
	if !ok {
		return fmt.Errorf("role %q: %w", id, ErrNotFound)
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":          roleURI(id),
		"@odata.type":        "#Role.v1_3_1.Role",
		"Id":                 id,
		"Name":               id + " Role",
		"RoleId":             id,
		"IsPredefined":       true,
		"AssignedPrivileges": privs,
		"OemPrivileges":      []string{},
	})
}
