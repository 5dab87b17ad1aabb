// Package metrics owns the bridge's Prometheus metrics: one registry per
// bridge (no global state), the Redfish request hook, a collector that
// reads the SSA writer's and the reconcilers' counters at scrape time, the
// import duration histogram and the leader gauge, and the plain-HTTP
// handler serving /metrics, /healthz and /readyz.
package metrics
