package service

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/webui"
)

// TestWithPages: the HTTPS server's handler sends "/" and /ui/ to the
// pages and everything else (/redfish, /uix, a path the pages do not
// own) to the Redfish service; disabled, everything to the service.
func TestWithPages(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("X-Served-By", "api") })
	for _, tc := range []struct {
		path     string
		disabled bool
		pages    bool
	}{
		{path: "/", pages: true},
		{path: "/ui", pages: true},
		{path: "/ui/", pages: true},
		{path: "/ui/systems.html", pages: true},
		{path: "/redfish/v1/Systems"},
		{path: "/redfish"},
		{path: "/uix"},
		{path: "/favicon.ico"},
		{path: "/", disabled: true},
		{path: "/ui/", disabled: true},
	} {
		w := httptest.NewRecorder()
		withPages(webui.Config{Disabled: tc.disabled}, api).ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.path, nil))
		byPages := w.Header().Get("Content-Security-Policy") != ""
		byAPI := w.Header().Get("X-Served-By") == "api"
		if byPages != tc.pages || byAPI == tc.pages {
			t.Errorf("GET %s (disabled %v): pages %v, api %v; want pages %v", tc.path, tc.disabled, byPages, byAPI, tc.pages)
		}
	}
}
