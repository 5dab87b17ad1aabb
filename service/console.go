package service

import (
	"net/http"
	"strings"

	"github.com/redfish-bridge/redfish-bridge/vncconsole"
)

// withConsole serves the graphical console under [vncconsole.PathPrefix]
// beside the Redfish service h, on the same port.
func withConsole(h http.Handler, console *vncconsole.Console) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, vncconsole.PathPrefix) {
			console.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}
