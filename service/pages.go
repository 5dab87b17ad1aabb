package service

import (
	"net/http"

	"github.com/redfish-bridge/redfish-bridge/webui"
)

// withPages is the HTTPS server's handler: the web pages (package webui:
// "/" and /ui/) beside the Redfish service api (everything else), unless
// cfg disables them. The pages are static and a client of api, so they
// need nothing else of the bridge.
func withPages(cfg webui.Config, api http.Handler) http.Handler {
	if cfg.Disabled {
		return api
	}
	pages := webui.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if webui.Serves(r.URL.Path) {
			pages.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
