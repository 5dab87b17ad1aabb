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
// whose scope is checked against the kept labels on every GET. A
// revision the backend cannot name ("") is never kept, so the body is
// rendered afresh. The bodies kept are bounded by bytes
// ([maxSystemBodyBytes]); past the budget, a body is admitted only when
// its system missed recently too ([systemBodies.admitLocked]).

// maxSystemBodyBytes bounds the bytes of the kept bodies ([systemBody.size]:
// ~2.6 KB each measured, `BenchmarkGetSystemRoundRobin`), so that every
// system's body is kept at 10,000 systems (~26 MB) and a fixed 32 MiB at
// any number: at 100,000 systems a body each (~260 MB) would not leave
// the bridge's memory target, and a GET that misses renders and encodes
// (~43 us and 144 allocations through the whole service in-process, a
// kept one ~10 us and 30: [appendJSON]). Bodies vary in size (boot order,
// media, labels), so bytes bound memory where a count of bodies would
// not. Past the budget, a new body makes room by dropping entries not read
// since they were kept or last passed over (second chance: a hot system's
// body is not dropped for another's), but only for a system that missed
// twice within a window
// ([systemBodies.admitLocked]): Ironic polls the systems it is
// provisioning every few seconds, which get in on their second read,
// while its power-state sync reads every system once per cycle, whose
// bodies mostly stay out, so the kept ones stay and a round robin hits
// ~budget/systems (~1/8 at 100,000) where admitting every miss hit ~0.2%.
const maxSystemBodyBytes = 32 << 20

// minDoorkeeperWindow is the least [systemBodies.admitLocked] window, in
// misses.
const minDoorkeeperWindow = 64

// systemBodyOverhead is what a kept body costs beyond its bytes and
// strings: the map entry, its key and the entry's headers.
const systemBodyOverhead = 128

// keptBody is a kept [systemBody] and its second-chance mark.
type keptBody struct {
	systemBody
	// used is set when the body is kept or read, and cleared when an
	// eviction passes it over ([systemBodies.put]).
	used bool
}

type systemBody struct {
	revision string
	// labels are the VM's at revision (shared: do not modify), for the
	// scope check.
	labels  map[string]string
	body    []byte
	version string
}

// size is what e costs in [systemBodies.bytes] when kept under key.
func (e systemBody) size(key system.Key) int {
	return len(e.body) + len(e.revision) + len(e.version) + len(key.Namespace) + len(key.Name) + systemBodyOverhead
}

// systemBodies are the kept ComputerSystem bodies, one per system. Entries
// go with their VM: on a GET that finds it gone, and by the sweep after
// any change of [Systems.Membership]. Safe for concurrent use.
type systemBodies struct {
	mu      sync.Mutex
	entries map[system.Key]*keptBody
	// bytes are the entries' sizes, at most budget ([maxSystemBodyBytes]
	// when 0).
	bytes, budget int
	// swept is the membership at the last sweep.
	swept uint64
	// seen and seenBefore are the doorkeeper ([systemBodies.admitLocked]):
	// the systems that missed past the budget recently, and before that.
	seen, seenBefore map[system.Key]struct{}
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
	e.used = true
	return e.systemBody, true
}

// put keeps e for key (replacing any older one) unless its revision is
// unknown, dropping other entries while the budget is exceeded: in map
// order (arbitrary), each entry read since it was kept or last passed
// over is passed over once (its mark cleared), so a body read since the
// last eviction stays unless every other one was read or kept since too.
func (m *systemBodies) put(key system.Key, e systemBody) {
	if e.revision == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[system.Key]*keptBody{}
	}
	budget := m.budget
	if budget == 0 {
		budget = maxSystemBodyBytes
	}
	_, kept := m.entries[key]
	m.dropLocked(key)
	size := e.size(key)
	if size > budget {
		return
	}
	if !kept && m.bytes+size > budget && !m.admitLocked(key) {
		return
	}
	for m.bytes+size > budget { // a second pass drops what the first passed over
		for k, other := range m.entries {
			if m.bytes+size <= budget {
				break
			}
			if other.used {
				other.used = false
				continue
			}
			m.dropLocked(k)
		}
	}
	m.entries[key] = &keptBody{systemBody: e, used: true}
	m.bytes += size
}

// admitLocked tells whether key's body, not kept, may drop others to get
// in: only on its second miss past the budget within a window of as many
// misses as half the bodies kept ([minDoorkeeperWindow] at least), or up
// to twice that. A round robin over more than twice the bodies kept comes
// back to a key after more misses than that, so its keys stay out and the
// kept ones stay; a system read again sooner gets in. The doorkeeper
// holds keys only (up to as many as the bodies kept, ~100 bytes each,
// beside the budget). m.mu is held.
func (m *systemBodies) admitLocked(key system.Key) bool {
	_, again := m.seen[key]
	if _, before := m.seenBefore[key]; before {
		again = true
	}
	if again {
		delete(m.seen, key)
		delete(m.seenBefore, key)
		return true
	}
	if m.seen == nil {
		m.seen = map[system.Key]struct{}{}
	}
	m.seen[key] = struct{}{}
	if len(m.seen) >= max(len(m.entries)/2, minDoorkeeperWindow) {
		m.seenBefore, m.seen = m.seen, nil
	}
	return false
}

// drop forgets key's body (its VM is gone).
func (m *systemBodies) drop(key system.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropLocked(key)
}

// dropLocked is drop with m.mu held.
func (m *systemBodies) dropLocked(key system.Key) {
	if e, ok := m.entries[key]; ok {
		m.bytes -= e.size(key)
		delete(m.entries, key)
	}
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

// size is the bytes of the kept bodies.
func (m *systemBodies) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

// len is the number of kept bodies.
func (m *systemBodies) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
