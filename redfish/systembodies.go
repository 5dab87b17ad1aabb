package redfish

import (
	"sync"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// A GET of a ComputerSystem writes the body rendered for the system's
// current [SystemView.Revision], kept from an earlier GET: building the
// view from the cached VM and encoding it was ~2/3 of the handler's CPU,
// and Ironic polls unchanged systems. The body shows only what the
// revision covers (the VM and its VMI: power, boot override and mode,
// media and power intents in its annotations, health, boot progress,
// CPU, memory, UUID, the bootOrder of its disks and interfaces) and the
// service's own constant configuration; it does not depend on the caller,
// whose scope is checked against the kept labels on every GET. A revision the backend cannot name ("") is never
// kept, so the body is rendered afresh.

// maxSystemBodies bounds the kept bodies (~2 KB each). Past it, an
// arbitrary entry makes room: Ironic polls the systems it is
// provisioning, which stay.
const maxSystemBodies = 2048

type systemBody struct {
	revision string
	// labels are the VM's at revision (shared: do not modify), for the
	// scope check.
	labels  map[string]string
	body    []byte
	version string
}

// systemBodies are the kept ComputerSystem bodies, one per system. Entries
// go with their VM: on a GET that finds it gone, and by the sweep after
// any change of [Systems.Membership]. Safe for concurrent use.
type systemBodies struct {
	mu      sync.Mutex
	entries map[system.Key]systemBody
	// swept is the membership at the last sweep.
	swept uint64
}

// get returns the body kept for key at revision ("" never matches).
func (m *systemBodies) get(key system.Key, revision string) (systemBody, bool) {
	if revision == "" {
		return systemBody{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok || e.revision != revision {
		return systemBody{}, false
	}
	return e, true
}

// put keeps e for key (replacing any older one) unless its revision is
// unknown.
func (m *systemBodies) put(key system.Key, e systemBody) {
	if e.revision == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[system.Key]systemBody{}
	}
	if _, ok := m.entries[key]; !ok && len(m.entries) >= maxSystemBodies {
		for k := range m.entries { // map order: an arbitrary entry
			delete(m.entries, k)
			break
		}
	}
	m.entries[key] = e
}

// drop forgets key's body (its VM is gone).
func (m *systemBodies) drop(key system.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, key)
}

// sweep drops the bodies of systems that are gone, once per membership:
// exists tells (it must not call back into m).
func (m *systemBodies) sweep(membership uint64, exists func(system.Key) bool) {
	m.mu.Lock()
	if m.swept == membership {
		m.mu.Unlock()
		return
	}
	m.swept = membership
	keys := make([]system.Key, 0, len(m.entries))
	for k := range m.entries {
		keys = append(keys, k)
	}
	m.mu.Unlock()
	for _, k := range keys {
		if !exists(k) {
			m.drop(k)
		}
	}
}

// len is the number of kept bodies.
func (m *systemBodies) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
