package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The account service is read-only (accounts live in a Kubernetes Secret)
// and shows each caller only its own account, whose RoleId says what the
// caller may do (see roles.go).

const (
	accountServiceURI = "/redfish/v1/AccountService"
	accountsURI       = accountServiceURI + "/Accounts"
)

func (s *Server) getAccountService(c echo.Context) error {
	return send(c, http.StatusOK, obj{
		"@odata.id":      accountServiceURI,
		"@odata.type":    "#AccountService.v1_18_1.AccountService",
		"Id":             "AccountService",
		"Name":           "Account Service",
		"ServiceEnabled": true,
		"Accounts":       link(accountsURI),
		"Roles":          link(rolesURI),
		"Status":         statusOK(),
	})
}

func (s *Server) listAccounts(c echo.Context) error {
	return send(c, http.StatusOK, collection(accountsURI, "#ManagerAccountCollection.ManagerAccountCollection", "Accounts Collection",
		[]string{accountsURI + "/" + principal(c).User}))
}

func (s *Server) getAccount(c echo.Context) error {
	p := principal(c)
	user := p.User
	if c.Param("user") != user {
		return fmt.Errorf("account %q is not the caller's: %w", c.Param("user"), ErrNotFound)
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":    accountsURI + "/" + user,
		"@odata.type":  "#ManagerAccount.v1_14_1.ManagerAccount",
		"Id":           user,
		"Name":         "Account " + user,
		"UserName":     user,
		"RoleId":       roleOf(p),
		"AccountTypes": []string{"Redfish"},
		"Enabled":      true,
		"Locked":       false,
		"Password":     nil,
		"Links":        obj{"Role": link(roleURI(roleOf(p)))},
	})
}
