package redfish

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// memorySessions is an in-process auth.Revocations and auth.Sessions, as
// one replica's view of the shared sessions ConfigMap: a revoked session is
// no longer open.
type memorySessions struct {
	testutil.MemoryRevocations
	mu    sync.Mutex
	open  map[string]auth.Session
	limit int // > 0: at most this many open sessions, like the ConfigMap's bound
	// revokeErr, if set, is what Revoke returns, recording nothing (a
	// ConfigMap write the apiserver refused)
	revokeErr error
}

func (m *memorySessions) Revoke(ctx context.Context, id, user string, until time.Time) error {
	m.mu.Lock()
	err := m.revokeErr
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return m.MemoryRevocations.Revoke(ctx, id, user, until)
}

func (m *memorySessions) Opened(ctx context.Context, s auth.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open == nil {
		m.open = map[string]auth.Session{}
	}
	if m.limit > 0 {
		live := 0
		for id := range m.open {
			if revoked, err := m.Revoked(ctx, id); err != nil {
				return err
			} else if !revoked {
				live++
			}
		}
		if live >= m.limit {
			return fmt.Errorf("%d sessions open: %w", live, auth.ErrSessionLimit)
		}
	}
	m.open[s.ID] = s
	return nil
}

func (m *memorySessions) Open(ctx context.Context) ([]auth.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []auth.Session
	for id, s := range m.open {
		revoked, err := m.Revoked(ctx, id)
		if err != nil {
			return nil, err
		}
		if !revoked {
			out = append(out, s)
		}
	}
	return out, nil
}

func (m *memorySessions) Lookup(ctx context.Context, id string, _ time.Time) (auth.Session, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.open[id]
	if !ok {
		return auth.Session{}, false, nil
	}
	revoked, err := m.Revoked(ctx, id)
	return s, !revoked, err
}

func (m *memorySessions) Touch(ctx context.Context, s auth.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if revoked, err := m.Revoked(ctx, s.ID); err != nil {
		return err
	} else if _, ok := m.open[s.ID]; !ok || revoked {
		return fmt.Errorf("touch %s: %w", s.ID, auth.ErrNoSuchSession)
	}
	m.open[s.ID] = s
	return nil
}
