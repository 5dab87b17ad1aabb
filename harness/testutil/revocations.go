package testutil

import (
	"context"
	"sync"
	"time"
)

// MemoryRevocations is an in-process session revocation store (it
// implements redfish/auth's Revocations) for tests. The zero value is
// ready.
type MemoryRevocations struct {
	mu  sync.Mutex
	ids map[string]time.Time
	Now func() time.Time // nil means time.Now
}

// Revoke marks session id (of a user) as logged out until its token expires, dropping
// the records already expired.
func (m *MemoryRevocations) Revoke(_ context.Context, id, _ string, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.Now != nil {
		now = m.Now()
	}
	if m.ids == nil {
		m.ids = map[string]time.Time{}
	}
	for k, exp := range m.ids {
		if now.After(exp) {
			delete(m.ids, k)
		}
	}
	m.ids[id] = until
	return nil
}

// Revoked reports whether session id was logged out.
func (m *MemoryRevocations) Revoked(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.ids[id]
	return ok, nil
}
