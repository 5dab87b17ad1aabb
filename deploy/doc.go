// Package deploy holds the Helm chart (deploy/redfish-bridge) and its
// tests; it has no Go API.
//
// The tests run bin/helm (built by `make tools`):
//
//   - chart_test.go: `helm lint` (and --strict), `helm template` golden
//     files under testdata/ (go test ./deploy -run Golden -update rewrites
//     them), values.schema.json rejecting bad values;
//   - install_test.go: a real `helm install` into a test apiserver (and an
//     upgrade to all namespaces that keeps the generated secrets);
//   - cycle_test.go: the bridge, run in-process with a TokenRequest token of
//     the chart's ServiceAccount and the chart's --config values, drives a
//     full virtual-media provisioning cycle over HTTP with exactly the
//     chart's RBAC, and must log no Forbidden error (logwatch_test.go);
//   - binary_test.go: `redfish-bridge serve` built from cmd/ runs with the
//     chart's ConfigMap, TLS Secret and ServiceAccount token, turns ready
//     on the probe port and serves Redfish with a certificate valid for
//     the Service name;
//   - imagecache_test.go: the image cache's key Secret, its mount and
//     the uninstall hook Job as rendered; uninstall_test.go: on a test
//     apiserver the key survives an upgrade, and helm uninstall's hook
//     (its container run by the test, which plays the Job controller)
//     leaves no image cache entry;
//   - rbacgrants_test.go: the table of grants, each with the call the
//     bridge makes with it; rbacverbs_test.go: every verb of every rule
//     the chart grants is needed: without it the call the bridge makes
//     with it is Forbidden, and every call in the table is granted.
package deploy
