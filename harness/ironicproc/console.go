package ironicproc

import (
	"context"
	"net/http"
	"net/url"
)

// Console is a node's serial console as Ironic reports it
// (GET /v1/nodes/{node}/states/console).
type Console struct {
	Enabled bool `json:"console_enabled"`
	// Info is how to reach it: {"type": "socat", "url": "tcp://host:port"}
	// for ipmitool-socat; nil while disabled.
	Info *struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	} `json:"console_info"`
}

// SetConsole asks the conductor to start (or stop) the node's console;
// it answers 202 and does so in the background.
func (c *Client) SetConsole(ctx context.Context, id string, enabled bool) error {
	return c.Do(ctx, http.MethodPut, "/v1/nodes/"+url.PathEscape(id)+"/states/console", map[string]any{"enabled": enabled}, nil)
}

// Console reads the node's console state. For ipmitool-socat the
// conductor first runs `ipmitool sol deactivate` on the node's BMC, which
// ends a session in progress: read it before connecting, not during.
func (c *Client) Console(ctx context.Context, id string) (Console, error) {
	var con Console
	return con, c.Do(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(id)+"/states/console", nil, &con)
}
