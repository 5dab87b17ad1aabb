// Package e2e holds the end-to-end tests: the whole product (demo.Start: a
// real etcd + kube-apiserver with the KubeVirt CRDs, KubeVirt's own
// virt-controller v1.9.0 with package sim as the node, the bridge with its
// RBAC-restricted identity, an ISO server)
// driven by real Redfish clients (OpenStack's sushy library, Debian 12's 4.3.3,
// 5.8.0 and Debian unstable's 5.13.0, through Ironic 21's and Ironic 38/39's virtual-media
// sequences; DMTF's redfishtool; the gofish Go client; Ansible's
// community.general Redfish modules), with the resulting Kubernetes objects checked through the
// admin client. Every test runs on both CRD variants (stock KubeVirt,
// atomic lists; and list-type map).
//
// The package has no non-test code; run it with `make e2e`.
package e2e
