module github.com/redfish-bridge/redfish-bridge/hack/cdi/manifests

// Built only by hack/cdi.sh, inside a copy of CDI's own module: a module
// of its own so that the product's go mod tidy leaves its imports alone.

go 1.26
