// Package vncconsole is the bridge's graphical console: a System's screen
// in the browser, relayed from KubeVirt's vnc subresource.
//
//   - [Tokens]: the one-time tokens a console page's WebSocket presents
//     instead of any credential: short-lived, HMAC-signed, bound to one
//     Redfish session, one user and one System, redeemed once.
//   - [Handler]: the console WebSocket. Same origin only; the token
//     redeemed; the session not logged out; one user's and one System's
//     open consoles bounded ([Config]); then RFB relayed both ways, a
//     view-only grant's input dropped in the relay ([rfb.ViewOnly]). A
//     console ends when either side closes, the browser idles, does not
//     read what it is sent within WriteTimeout (it holds one buffer of the
//     screen), or its Redfish session ends; one audit line says who, which
//     System, how long, how many bytes and why it ended.
package vncconsole
