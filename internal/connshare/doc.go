// Package connshare caps a listener's open connections and shares them
// out, so that no user and no address locks the others out: the HTTPS
// service's and the SSH console's listeners (docs/reliability.md rows 14,
// 114, 115). A server reports how far each connection got
// ([Conn.SetStage]) and whom it authenticated ([Conn.Authenticated]);
// [Listener] chooses which connection a new one closes when the cap is
// reached.
package connshare
