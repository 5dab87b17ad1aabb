package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// boundedSessions is a session store holding at most limit sessions, like
// the sessions ConfigMap at its bound.
type boundedSessions struct {
	mu    sync.Mutex
	limit int
	open  []Session
}

func (b *boundedSessions) Opened(_ context.Context, s Session) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.open) >= b.limit {
		return fmt.Errorf("store: %w", ErrSessionLimit)
	}
	b.open = append(b.open, s)
	return nil
}

func (b *boundedSessions) Open(context.Context) ([]Session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Session(nil), b.open...), nil
}

// TestSessionsPerUser is the attack of docs/reliability.md row 17: one user's logins
// filled the shared session store, and every other user's login failed.
// Now that user's logins stop at its own bound, concurrent ones included,
// and another user still logs in.
func TestSessionsPerUser(t *testing.T) {
	const perUser, store = 3, 10
	f := newFixture(t)
	f.users["bob"] = User{Name: "bob", PasswordHash: hash(t, "bob-pw"), Scope: Scope{Namespaces: []string{"b"}}}
	sessions := &boundedSessions{limit: store}
	a, err := New(Config{Users: f.users, Revocations: f.revs, Sessions: sessions, Key: testKey, Now: f.clock.Now, MaxSessionsPerUser: perUser})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened, refused := 0, 0
	for i := range store + 5 {
		wg.Go(func() {
			_, _, err := a.Login(t.Context(), "192.0.2.1", "alice", "pw")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				opened++
			case errors.Is(err, ErrSessionLimit):
				refused++
			default:
				t.Errorf("login %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	t.Logf("%d concurrent logins of alice: %d opened, %d refused", store+5, opened, refused)
	if opened != perUser {
		t.Errorf("alice opened %d sessions, want her bound %d", opened, perUser)
	}
	if _, _, err := a.Login(t.Context(), "192.0.2.2", "bob", "bob-pw"); err != nil {
		t.Errorf("bob's login while alice is at her bound: %v", err)
	}
	// An expired session no longer counts: unused, it ends between the
	// 30-minute timeout and a tenth of it later.
	f.clock.Add(34 * time.Minute)
	if _, _, err := a.Login(t.Context(), "192.0.2.1", "alice", "pw"); err != nil {
		t.Errorf("alice's login after her sessions expired: %v", err)
	}
}

func (b *boundedSessions) Lookup(_ context.Context, id string, _ time.Time) (Session, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.open {
		if s.ID == id {
			return s, true, nil
		}
	}
	return Session{}, false, nil
}

func (b *boundedSessions) Touch(_ context.Context, s Session) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, o := range b.open {
		if o.ID == s.ID {
			b.open[i] = s
			return nil
		}
	}
	return fmt.Errorf("touch %s: %w", s.ID, ErrNoSuchSession)
}
