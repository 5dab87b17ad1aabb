package redfish

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The account service is read-only (accounts live in a Kubernetes Secret)
// and shows each caller only its own account.

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
		"Status":         statusOK(),
	}, "")
}

func (s *Server) listAccounts(c echo.Context) error {
	return send(c, http.StatusOK, collection(accountsURI, "#ManagerAccountCollection.ManagerAccountCollection", "Accounts Collection",
		[]string{accountsURI + "/" + principal(c).User}), "")
}

func (s *Server) getAccount(c echo.Context) error {
	user := principal(c).User
	if c.Param("user") != user {
		return fmt.Errorf("account %q is not the caller's: %w", c.Param("user"), ErrNotFound)
	}
	return send(c, http.StatusOK, obj{
		"@odata.id":    accountsURI + "/" + user,
		"@odata.type":  "#ManagerAccount.v1_14_1.ManagerAccount",
		"Id":           user,
		"Name":         "Account " + user,
		"UserName":     user,
		"RoleId":       "Administrator",
		"AccountTypes": []string{"Redfish"},
		"Enabled":      true,
		"Locked":       false,
		"Password":     nil,
	}, "")
}
