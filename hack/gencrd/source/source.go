// Package source only imports the types the KubeVirt CRDs are generated
// from; see go.mod.
package source

import _ "kubevirt.io/api/core/v1"
