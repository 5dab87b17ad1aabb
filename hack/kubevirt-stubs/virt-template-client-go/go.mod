// Module virt-template-client-go is a local stub of
// kubevirt.io/virt-template-client-go (refused by the Go module proxy), just
// enough for virt-controller v1.9.0 to build. See ../README.md.
module kubevirt.io/virt-template-client-go

go 1.26.0

require (
	k8s.io/apimachinery v0.34.2
	k8s.io/client-go v0.34.2
	kubevirt.io/virt-template-api v0.2.0
)

replace kubevirt.io/virt-template-api => ../virt-template-api
