package apply

import (
	"sync"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// maxLegacyMemo bounds [legacyMemo]'s answers (~100 bytes each).
const maxLegacyMemo = 4096

// legacyMemo keeps [ValidateLegacy]'s answer per VM and resourceVersion:
// deciding it parses the VM's managedFields (FieldsV1 JSON), and every
// render of a System asks it ([power.BootModes]) while the VM is
// unchanged. One resourceVersion is one content of the VM, so the answer
// is the same for every read of it. Past maxLegacyMemo VMs, an
// arbitrary answer makes room. Safe for concurrent use.
type legacyMemo struct {
	mu sync.Mutex
	m  map[system.Key]legacyAnswer
}

type legacyAnswer struct {
	resourceVersion string
	err             error // shared: do not modify
}

// get returns the answer kept for key at resourceVersion.
func (l *legacyMemo) get(key system.Key, resourceVersion string) (legacyAnswer, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.m[key]
	return a, ok && a.resourceVersion == resourceVersion
}

// put keeps err as key's answer at resourceVersion.
func (l *legacyMemo) put(key system.Key, resourceVersion string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[system.Key]legacyAnswer{}
	}
	if _, ok := l.m[key]; !ok && len(l.m) >= maxLegacyMemo {
		for k := range l.m { // map order: an arbitrary answer
			delete(l.m, k)
			break
		}
	}
	l.m[key] = legacyAnswer{resourceVersion: resourceVersion, err: err}
}
