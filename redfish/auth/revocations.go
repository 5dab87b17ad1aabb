package auth

import (
	"context"
	"sync"
	"time"
)

// Revocations records logged-out sessions until their tokens expire. Every
// replica must see every revocation, so production backs it with a shared
// Kubernetes object.
type Revocations interface {
	// Revoke marks session id as logged out; until is when its token expires
	// anyway, after which the record may be dropped.
	Revoke(ctx context.Context, id string, until time.Time) error
	// Revoked reports whether session id was logged out.
	Revoked(ctx context.Context, id string) (bool, error)
}

// MemoryRevocations is an in-process [Revocations] for tests and single
// replica use. The zero value is ready.
type MemoryRevocations struct {
	mu  sync.Mutex
	ids map[string]time.Time
	Now func() time.Time // nil means time.Now
}

// Revoke implements [Revocations].
func (m *MemoryRevocations) Revoke(_ context.Context, id string, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
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

// Revoked implements [Revocations].
func (m *MemoryRevocations) Revoked(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.ids[id]
	return ok, nil
}

func (m *MemoryRevocations) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}
