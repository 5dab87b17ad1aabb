// Package webui serves the BMC's web pages on the bridge's HTTPS port,
// beside /redfish: a login page and the Systems page, under [Prefix]
// ("/" redirects there). The pages are static files embedded in the
// binary (static/: HTML, the pages' own CSS and JavaScript, no inline
// script) and are a Redfish client of the same service: they log in with
// a Redfish session (POST SessionService/Sessions; the X-Auth-Token kept
// in the tab's sessionStorage; logout DELETEs the session) and read and
// act on the Systems through /redfish/v1 only, so what a user sees and
// may do is exactly what the API lets that user see and do (scope, roles,
// sessions' expiry). Every page answer carries the headers a page that
// holds a BMC's credentials needs: a Content-Security-Policy without
// inline scripts and with frame-ancestors 'none', nosniff, no caching,
// and HSTS on TLS.
package webui
