// Module virt-template-api is a local stub of kubevirt.io/virt-template-api
// (refused by the Go module proxy), just enough for virt-controller v1.9.0 to
// build. See ../README.md.
module kubevirt.io/virt-template-api

go 1.26.0

require k8s.io/apimachinery v0.34.2
