package manager

import "fmt"

// Group is when a part runs: the groups start in the order of the
// constants and stop in the reverse order (see the package doc).
type Group int

// The groups, in start order.
const (
	// Probes serve /healthz and /readyz: up before the caches sync.
	Probes Group = iota
	// Caches are synced before any server starts.
	Caches
	// Servers serve requests that read the caches.
	Servers
	// Always parts run on every replica, after the servers started.
	Always
	// Leader parts run only while this replica leads, once per term.
	Leader

	numGroups
)

var groupNames = [numGroups]string{"probes", "caches", "servers", "always", "leader"}

// String is the group's name, as in errors.
func (g Group) String() string {
	if g < 0 || g >= numGroups {
		return fmt.Sprintf("group(%d)", int(g))
	}
	return groupNames[g]
}
