package vncconsole

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTokens(t *testing.T) {
	now := time.Date(2026, 12, 6, 20, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	key := bytes.Repeat([]byte{7}, 32)
	tokens, err := NewTokens(key, 30*time.Second, clock)
	if err != nil {
		t.Fatal(err)
	}
	grant := Grant{Session: "s1", User: "alice", System: "ns.vm-1", ViewOnly: true}
	issue := func() string {
		t.Helper()
		tok, err := tokens.Issue(grant)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}

	t.Run("redeemed once", func(t *testing.T) {
		tok := issue()
		g, err := tokens.Redeem(tok, "ns.vm-1")
		if err != nil {
			t.Fatal(err)
		}
		if g.Session != "s1" || g.User != "alice" || !g.ViewOnly {
			t.Errorf("grant %+v", g)
		}
		if _, err := tokens.Redeem(tok, "ns.vm-1"); !errors.Is(err, ErrBadToken) || !strings.Contains(err.Error(), "already used") {
			t.Errorf("replayed token: %v, want already used", err)
		}
	})
	other, err := NewTokens(bytes.Repeat([]byte{8}, 32), 0, clock)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := other.Issue(grant)
	if err != nil {
		t.Fatal(err)
	}
	tok := issue()
	payload, sig, _ := strings.Cut(tok, ".")
	for _, tc := range []struct {
		name, token, system, want string
		after                     time.Duration
	}{
		{"forged (another key)", forged, "ns.vm-1", "bad signature", 0},
		{"signature of another payload", issue()[:len(payload)] + "." + sig, "ns.vm-1", "bad signature", 0},
		{"malformed", "not-a-token", "ns.vm-1", "malformed", 0},
		{"another System", issue(), "ns.vm-2", "for System ns.vm-1, not ns.vm-2", 0},
		{"expired", issue(), "ns.vm-1", "expired", 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := now
			now = now.Add(tc.after)
			defer func() { now = saved }()
			_, err := tokens.Redeem(tc.token, tc.system)
			if !errors.Is(err, ErrBadToken) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Redeem = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("refused tokens stay unused", func(t *testing.T) {
		tok := issue()
		if _, err := tokens.Redeem(tok, "ns.vm-2"); err == nil {
			t.Fatal("redeemed for another System")
		}
		if _, err := tokens.Redeem(tok, "ns.vm-1"); err != nil {
			t.Errorf("the right System after a refusal: %v", err)
		}
	})
	t.Run("used set is pruned", func(t *testing.T) {
		if _, err := tokens.Redeem(issue(), "ns.vm-1"); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
		if _, err := tokens.Redeem(issue(), "ns.vm-1"); err != nil {
			t.Fatal(err)
		}
		if n := len(tokens.used); n != 1 {
			t.Errorf("%d nonces remembered, want 1", n)
		}
	})
	if _, err := NewTokens([]byte("short"), 0, nil); err == nil {
		t.Error("a 5-byte key was accepted")
	}
}
