// This file is part of the legacy VM controller (Options.LegacyVMController):
// the simulator's own imitation of virt-controller, kept ONLY for the suites
// not yet migrated to KubeVirt's real virt-controller (listed in
// docs/testing-kubevirt.md). New tests use testcluster.Options.VirtController.

package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
)

// firmwareNamespace is the uuid v5 namespace of derived firmware UUIDs.
var firmwareNamespace = uuid.MustParse("6a1a3c1e-5a0b-4d59-9f43-2f0e7d1b7c21")

// FirmwareUUID is the firmware UUID the simulator gives a VM whose template
// sets none: a uuid v5 of "namespace/name", stable across restarts.
func FirmwareUUID(namespace, name string) string {
	return uuid.NewSHA1(firmwareNamespace, []byte(namespace+"/"+name)).String()
}

// specHash is a digest of a template spec; encoding/json sorts map keys,
// so equal specs hash equally.
func specHash(spec map[string]any) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hash template spec: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
