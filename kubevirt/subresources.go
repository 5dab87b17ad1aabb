package kubevirt

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// SubresourceGroupVersion is virt-api's aggregated API: the subresources
// of a VirtualMachine that virt-api serves under
// subresources.kubevirt.io/v1 (start, stop, restart...). Only virt-api may change a VMI's
// spec.terminationGracePeriodSeconds (its VMI update webhook refuses spec
// changes from anyone but KubeVirt's service accounts), so a forced stop or
// restart goes through it.
var SubresourceGroupVersion = schema.GroupVersion{Group: kubevirtv1.SubresourceGroupName, Version: kubevirtv1.ApiLatestVersion}

// Subresources of a VirtualMachine the bridge calls (HTTP PUT).
const (
	// SubresourceStop patches the VMI's grace period to the body's
	// gracePeriod, then asks virt-controller to stop the VMI (Stop(uid), or
	// runStrategy Halted for Always and Once). Under runStrategy Halted it
	// answers 409 unless the grace period is shorter than the VMI's, and
	// 409 "not running" without a live VMI.
	SubresourceStop = "stop"
	// SubresourceRestart with gracePeriodSeconds 0 patches the VMI's grace
	// period to 1 and adds Stop(uid)+Start; 409 under runStrategy Halted
	// or Once or without a VMI.
	SubresourceRestart = "restart"
)

// SubresourcePath is the URL path of VirtualMachine namespace/name's
// subresource sub.
func SubresourcePath(namespace, name, sub string) string {
	return fmt.Sprintf("/apis/%s/namespaces/%s/%s/%s/%s", SubresourceGroupVersion, namespace, VirtualMachines.Resource, name, sub)
}

// SubresourceDiscoveryPath is the discovery document of
// [SubresourceGroupVersion]: 404 from kube-apiserver when no virt-api is
// registered.
func SubresourceDiscoveryPath() string { return "/apis/" + SubresourceGroupVersion.String() }

// ForceStopBody is the stop subresource's body that stops the guest at
// once: {"gracePeriod":0}.
func ForceStopBody() []byte {
	return mustJSON(kubevirtv1.StopOptions{GracePeriod: new(int64)})
}

// ForceRestartBody is the restart subresource's body of a forced restart:
// {"gracePeriodSeconds":0}.
func ForceRestartBody() []byte {
	return mustJSON(kubevirtv1.RestartOptions{GracePeriodSeconds: new(int64)})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("kubevirt: marshal %T: %v", v, err))
	}
	return b
}
