//go:build tools

// Package tools pins helm v3.22.0 for linting and rendering deploy/.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
