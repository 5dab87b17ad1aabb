// Package demo runs the product on its embedded default, for `make demo`:
// a local etcd + kube-apiserver with the KubeVirt CRDs and KubeVirt's own
// virt-controller v1.9.0 (testcluster.Options.VirtController, bin/ built by
// `make tools`), the node side of the cluster (sim: virt-handler, scheduler,
// kubelet), a few sample VirtualMachines, a small HTTP server offering a
// sample ISO, and the Redfish service on https://127.0.0.1:8443 with a
// generated self-signed certificate, running with the bridge's
// RBAC-restricted identity. Everything stops on Ctrl-C. Tests may also
// run virt-api (Options.VirtAPI: KubeVirt's webhooks and the subresource
// API the bridge forces power-offs through; `make demo` does not).
package demo
