//go:build tools

// Package tools pins controller-gen (sigs.k8s.io/controller-tools v0.20.1,
// the version KubeVirt v1.9.0 generates its CRDs with).
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
