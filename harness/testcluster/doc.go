// Package testcluster runs a real etcd and kube-apiserver on loopback with
// the KubeVirt CRDs installed, for tests and for `redfish-bridge-demo`.
//
// [Start] launches etcd and kube-apiserver (binaries from bin/, built by
// `make tools`) on free 127.0.0.1 ports in a temporary directory, then:
//
//   - authenticates two identities from a static token file: an admin
//     (group system:masters) and "redfish-bridge", bound to exactly the
//     RBAC the Helm chart grants the bridge (deploy/redfish-bridge's
//     templates/rbac.yaml rendered by bin/helm; see [BridgeUser] and
//     rbac.go);
//   - installs the chosen [crds.Variant] of the VirtualMachine and
//     VirtualMachineInstance CRDs and waits until discovery and OpenAPI v3
//     serve kubevirt.io/v1;
//   - installs a ValidatingAdmissionPolicy that rejects the VirtualMachines
//     KubeVirt's admission webhook would reject (see policy.go), and waits
//     until it is enforced (not with [Options.VirtAPI], below).
//
// With [Options.VirtController] it also runs KubeVirt's own virt-controller
// v1.9.0 (bin/virt-controller, built by `make tools` from the Go module
// proxy) out of cluster against the admin kubeconfig, after installing what
// virt-operator would leave for it: the kubevirt namespace, every other
// KubeVirt CRD ([crds.LoadControllerDeps]; the VM and VMI CRDs are the
// chosen variant's), a KubeVirt CR whose status is Deployed, and one Node
// ([NodeName], labelled kubevirt.io/schedulable). Start returns once it
// holds its leader lease; when it exits on its own (it does when it loses
// the lease, e.g. across an apiserver restart) it is started again
// ([Cluster.VirtControllerRestarts]). Its metrics certificate lives in its
// own directory (it watches that directory). It runs as its service
// account ([VirtControllerUser], in group system:masters). The node side
// (virt-handler, scheduler, kubelet) is package sim, which should write as
// virt-handler ([Cluster.VirtHandler]).
//
// With [Options.VirtAPI] KubeVirt's virt-api v1.9.0 (bin/virt-api) runs
// too, out of cluster as its service account ([VirtAPIUser]) with a
// self-signed certificate, on a port of the machine's first non-loopback
// IPv4 address ([Cluster.HostIP]; Start fails without one). Its validating
// and mutating webhook configurations (as virt-operator installs them,
// harness/testcluster/webhooks, `make generate-webhooks`) point at it by URL with
// that certificate as caBundle; the admission policy [PolicyName] is then
// not installed. Its aggregated API subresources.kubevirt.io/v1 is
// registered as virt-operator does ([SubresourcesAPIService], naming a
// selectorless Service kubevirt/virt-api whose Endpoints and EndpointSlice
// hold that address: kube-apiserver runs as an aggregator with endpoint
// routing, and endpoints may not be loopback), and Start waits until it is
// Available. kube-apiserver is started with a request-header CA (virt-api
// does not start without one in kube-system/extension-apiserver-authentication)
// and a proxy client certificate signed by it. virt-api's VMI mutator
// reverts VMI status writes by anyone but KubeVirt's service accounts,
// which is why virt-controller and the node side need those identities.
// virt-api is supervised like virt-controller ([Cluster.VirtAPIRestarts]);
// a restart registers its new port.
//
// Without virt-api, KubeVirt's admission webhooks are imitated by the
// admission policy below.
//
// On a virt-api cluster [Cluster.RunCDIAPIServer] installs CDI v1.66.0's
// own CRDs and runs its cdi-apiserver (bin/cdi-apiserver, built from
// source) with the admission webhooks CDI's operator registers
// (harness/testcluster/cdi, generated from CDI's code). CDI's programs
// listen on the fixed port 8443, so each runs in a network namespace of
// its own with TCP relays to and from the host's loopback (netns_linux.go;
// root only). With [Options.CDI] the cluster also runs CDI's own
// cdi-controller ([Cluster.RunCDIController]: network and mount
// namespaces of its own, the Deployment's environment and volumes, a veth
// pair to the host at [Cluster.CDIPodIP] for the simulated pods' metrics).
// [Cluster.InstallCDI] installs fixture CRDs instead, for the
// simulator's imitation of CDI's controller.
//
// No controller-manager, scheduler or kubelet runs:
//
//   - namespaces other than default, kube-system, kube-public and
//     kube-node-lease must be created explicitly ([Cluster.CreateNamespace]);
//   - PersistentVolumeClaims stay Pending until something (the simulator)
//     binds them; the StorageObjectInUseProtection admission plugin is off,
//     so a deleted PVC goes away at once instead of waiting for a finalizer
//     controller;
//   - the garbage collector does not run: ownerReferences are recorded but
//     dependents are NOT deleted with their owner;
//   - the ServiceAccount admission plugin is off and no token controller
//     runs, so pods do not get service account tokens mounted.
//
// [Cluster.Stop] kills the processes (each runs in its own process group,
// and on Linux dies with its parent through Pdeathsig) and removes the
// temporary directory. If the parent was SIGKILLed, the next Start removes
// the directory it left (owner.pid names a dead process).
//
// For tests: [ForTest] starts a cluster for one test and stops it in
// t.Cleanup. [Shared] starts one cluster per variant for the whole test
// binary (TestMain must call [RunMain], which stops them); tests sharing it
// work in their own [Cluster.TestNamespace]. Namespaces are never deleted:
// without a namespace controller a deleted namespace stays Terminating.
// A test that fails shows what the cluster's processes logged while it
// ran, kept to its namespaces ([Cluster.LogsOnFailure]; [ForTest], [Shared] and
// TestNamespace register for it), and [LoggerForTest] keeps the full log of
// a component the test runs for its failure.
package testcluster
