// Package logctx carries the logger in the context, the way
// controller-runtime's log.FromContext and log.IntoContext do: main and
// each background loop put their logger into the context with [Into]
// (a Redfish request adds its request id first), and code below reads it
// with [From], so every line names the request or loop it belongs to.
// A context without a logger logs through the process's root logger
// (slog.Default: the one main installs), as controller-runtime's
// log.FromContext falls back to its root logger: a line is never
// silently dropped for want of a logger. Code other than this package
// never logs through the global logger itself (.golangci.yml forbids it).
package logctx
