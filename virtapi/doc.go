// Package virtapi calls KubeVirt's virt-api through kube-apiserver: the
// stop and restart subresources of a VirtualMachine
// (subresources.kubevirt.io/v1, an aggregated API virt-api serves), with
// the bridge's own identity and rest.Config.
//
// The bridge needs them for one thing it cannot do itself: shorten a
// running VMI's spec.terminationGracePeriodSeconds, which is how long
// virt-handler lets the guest shut down before it kills it. virt-api's VMI
// update webhook refuses VMI spec changes from anyone but KubeVirt's
// service accounts, so a Redfish ForceOff or ForceRestart asks virt-api to
// stop (gracePeriod 0) or restart (gracePeriodSeconds 0) the VM; virt-api
// patches the grace period as itself and adds the state change requests
// virt-controller acts on. Paths and bodies are package kubevirt's.
//
// A cluster without virt-api (no APIService for the group) answers 404 for
// every such path; [Client] then returns [ErrNotServed], told apart from a
// missing VirtualMachine by the group's discovery document.
package virtapi
