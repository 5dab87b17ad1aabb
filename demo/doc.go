// Package demo runs the product on its embedded default, for `make demo`:
// a local etcd + kube-apiserver with the KubeVirt CRDs (testcluster), the
// KubeVirt simulator (sim), a few sample VirtualMachines, a small HTTP
// server offering a sample ISO, and the Redfish service on
// https://127.0.0.1:8443 with a generated self-signed certificate, running
// with the bridge's RBAC-restricted identity. Everything stops on Ctrl-C.
package demo
