package auth

import (
	"errors"
	"testing"
	"time"
)

// TestSessionMaxLifetime: a session kept in use ends SessionMaxLifetime
// after its login all the same (docs/reliability.md row 112); each use
// within the timeout keeps it open until then.
func TestSessionMaxLifetime(t *testing.T) {
	f := newFixture(t)
	a, err := New(Config{Users: f.users, Revocations: f.revs, Sessions: &boundedSessions{limit: 10}, Key: testKey, Now: f.clock.Now,
		SessionTTL: 30 * time.Minute, SessionMaxLifetime: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	_, tok, err := a.Login(t.Context(), "192.0.2.1", "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	for elapsed := 20 * time.Minute; elapsed < 2*time.Hour; elapsed += 20 * time.Minute {
		f.clock.Add(20 * time.Minute)
		p, err := a.Token(t.Context(), tok)
		if err != nil {
			t.Fatalf("in use %s after the login: %v", elapsed, err)
		}
		if end := time.Unix(1800000000, 0).Add(2 * time.Hour); p.Expires.After(end) {
			t.Errorf("%s after the login the session ends at %s, after its lifetime's end %s", elapsed, p.Expires, end)
		}
	}
	f.clock.Add(20 * time.Minute)
	if _, err := a.Token(t.Context(), tok); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("in use at its lifetime's end: %v, want ErrInvalidToken", err)
	}
}
