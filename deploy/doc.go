// Package deploy holds the Helm chart (deploy/redfish-bridge) and its
// tests; it has no Go API.
//
// The tests run bin/helm (built by `make tools`):
//
//   - chart_test.go: `helm lint` (and --strict), `helm template` golden
//     files under testdata/ (go test ./deploy -run Golden -update rewrites
//     them), values.schema.json rejecting bad values;
//   - install_test.go: a real `helm install` into a test apiserver, then
//     the bridge, run in-process with a token of the chart's
//     ServiceAccount, drives a full virtual-media provisioning cycle over
//     HTTP with exactly the chart's RBAC;
//   - rbac_test.go: every verb of every rule the chart grants is needed:
//     without it the operation the bridge performs with it is Forbidden.
package deploy
