package apply

import (
	"sync"
	"time"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// seenLive remembers the VMs a live read found while the cache did not
// have them yet (created a moment ago; their watch event is late on a
// loaded apiserver). Their later misses are read live again without
// drawing on the miss budget, so a System that answered once does not
// answer 404 to the next request because other misses spent the budget.
// Only VMs that exist earn an entry, so reads of absent names stay bounded
// by the budget. An entry lasts recentTTL from the live read that found
// it (never renewed) and is dropped by a live NotFound. Safe for
// concurrent use.
type seenLive struct {
	mu    sync.Mutex
	found map[system.Key]time.Time
	now   func() time.Time // time.Now; tests replace it
}

func newSeenLive() *seenLive {
	return &seenLive{found: map[system.Key]time.Time{}, now: time.Now}
}

// has reports whether a live read found key within recentTTL.
func (s *seenLive) has(key system.Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.found[key]
	if ok && s.now().Sub(at) > recentTTL {
		delete(s.found, key)
		return false
	}
	return ok
}

// record notes the outcome of a live read of a cache miss: found, or not.
func (s *seenLive) record(key system.Key, found bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !found {
		delete(s.found, key)
		return
	}
	if _, ok := s.found[key]; ok {
		return // never renewed: the budget applies again after recentTTL
	}
	if len(s.found) >= recentMax {
		now := s.now()
		for k, at := range s.found {
			if now.Sub(at) > recentTTL {
				delete(s.found, k)
			}
		}
		if len(s.found) >= recentMax {
			return
		}
	}
	s.found[key] = s.now()
}
