package sim

import (
	"crypto/sha256"
	"fmt"

	"github.com/google/uuid"
)

// MAC is the MAC address the simulator's domain gives an interface whose
// template sets none (libvirt picks one when KubeVirt passes none):
// locally administered, unicast, derived from the VM key and the interface
// name, so it is stable across restarts.
func MAC(namespace, name, iface string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name + "/" + iface))
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", sum[0], sum[1], sum[2], sum[3], sum[4])
}

// firmwareNamespace is the uuid v5 namespace of [FirmwareUUID].
var firmwareNamespace = uuid.MustParse("6a1a3c1e-5a0b-4d59-9f43-2f0e7d1b7c21")

// FirmwareUUID is a firmware UUID for a VM's template (demo's sample VMs
// set one, as a VM's author may): a uuid v5 of "namespace/name", so VMs of
// one name in different namespaces differ (virt-controller's own, which it
// persists when the template sets none, derives from the name only).
func FirmwareUUID(namespace, name string) string {
	return uuid.NewSHA1(firmwareNamespace, []byte(namespace+"/"+name)).String()
}
