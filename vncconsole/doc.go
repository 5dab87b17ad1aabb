// Package vncconsole is the bridge's graphical console: a System's screen
// in the browser. It issues the one-time tokens a console page's
// WebSocket presents instead of any credential ([Tokens]): short-lived,
// HMAC-signed, bound to one Redfish session, one user and one System,
// redeemed once.
package vncconsole
