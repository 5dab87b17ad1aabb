// Package logctx carries the logger in the context, the way
// controller-runtime's log.FromContext and log.IntoContext do: main and
// each background loop put their logger into the context with [Into]
// (a Redfish request adds its request id first), and code below reads it
// with [From], so every line names the request or loop it belongs to.
// There is no process-global fallback: a context without a logger logs
// nowhere.
package logctx
