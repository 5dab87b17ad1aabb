package sim

import (
	"crypto/sha256"
	"fmt"
)

// MAC is the MAC address the simulator's domain gives an interface whose
// template sets none (libvirt picks one when KubeVirt passes none):
// locally administered, unicast, derived from the VM key and the interface
// name, so it is stable across restarts.
func MAC(namespace, name, iface string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name + "/" + iface))
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", sum[0], sum[1], sum[2], sum[3], sum[4])
}
