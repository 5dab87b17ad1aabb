package auth

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func hash(t *testing.T, pw string) []byte {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// fixture is an Authenticator with user alice, its revocations and the
// clock the test moves.
type fixture struct {
	a     *Authenticator
	users StaticUsers
	revs  *testutil.MemoryRevocations
	clock *testutil.Clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: testutil.NewClock(time.Unix(1800000000, 0)), revs: &testutil.MemoryRevocations{}}
	f.users = StaticUsers{"alice": {Name: "alice", PasswordHash: hash(t, "pw"), Scope: Scope{Namespaces: []string{"a"}}}}
	a, err := New(Config{Users: f.users, Revocations: f.revs, Key: testKey, SessionTTL: time.Hour, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.a = a
	return f
}

func TestTokens(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(t *testing.T, f *fixture, tok string) string
		wantErr bool
	}{
		{"valid", func(_ *testing.T, _ *fixture, tok string) string { return tok }, false},
		{"expired", func(_ *testing.T, f *fixture, tok string) string { f.clock.Add(time.Hour); return tok }, true},
		{"almost expired", func(_ *testing.T, f *fixture, tok string) string { f.clock.Add(time.Hour - time.Second); return tok }, false},
		{"tampered payload", func(_ *testing.T, _ *fixture, tok string) string {
			p := strings.Split(tok, ".")
			p[1] = p[1][:len(p[1])-2] + "AA"
			return strings.Join(p, ".")
		}, true},
		{"tampered signature", func(_ *testing.T, _ *fixture, tok string) string { return tok[:len(tok)-2] + "AA" }, true},
		{"other key", func(t *testing.T, f *fixture, tok string) string {
			s, err := newSigner([]byte("another key, long enough to sign!!"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := f.a.signer.verify(tok, f.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			forged, err := s.sign(c)
			if err != nil {
				t.Fatal(err)
			}
			return forged
		}, true},
		{"garbage", func(_ *testing.T, _ *fixture, _ string) string { return "rb1.x" }, true},
		{"revoked", func(t *testing.T, f *fixture, tok string) string {
			p, err := f.a.Token(t.Context(), tok)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.a.Logout(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			return tok
		}, true},
		{"password changed", func(t *testing.T, f *fixture, tok string) string {
			u := f.users["alice"]
			u.PasswordHash = hash(t, "new")
			f.users["alice"] = u
			return tok
		}, true},
		{"user removed", func(_ *testing.T, f *fixture, tok string) string { delete(f.users, "alice"); return tok }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			p, tok, err := f.a.Login(t.Context(), "192.0.2.1", "alice", "pw")
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.a.Token(t.Context(), tt.mutate(t, f, tok))
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidToken) {
					t.Fatalf("Token: %v, want ErrInvalidToken", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Token: %v", err)
			}
			if got.User != "alice" || got.Session != p.Session || !got.Scope.AllowsNamespace("a") {
				t.Errorf("principal %+v, login gave %+v", got, p)
			}
		})
	}
}

func TestPassword(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.a.Password(ctx, "192.0.2.1", "alice", "pw"); err != nil {
		t.Fatalf("right password: %v", err)
	}
	// Cached now; a password change must still be noticed at once.
	u := f.users["alice"]
	u.PasswordHash = hash(t, "new")
	f.users["alice"] = u
	if _, err := f.a.Password(ctx, "192.0.2.1", "alice", "pw"); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("old password after change: %v", err)
	}
	if _, err := f.a.Password(ctx, "192.0.2.1", "alice", "new"); err != nil {
		t.Errorf("new password: %v", err)
	}
	if _, err := f.a.Password(ctx, "192.0.2.1", "nobody", "new"); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("unknown user: %v", err)
	}
}

func TestNewRejectsShortKey(t *testing.T) {
	_, err := New(Config{Users: StaticUsers{}, Revocations: &testutil.MemoryRevocations{}, Key: []byte("short")})
	if err == nil {
		t.Fatal("short key accepted")
	}
}

func TestThrottle(t *testing.T) {
	t0 := time.Unix(1800000000, 0)
	type attempt struct {
		ip, user string
		at       time.Duration
		fail     bool // the password was wrong (else right); unused when refused
		wantWait bool
	}
	tests := []struct {
		name     string
		attempts []attempt
	}{
		{"free failures then backoff", []attempt{
			{"a", "u", 0, true, false}, {"a", "u", 0, true, false}, {"a", "u", 0, true, false},
			{"a", "u", 0, true, false}, // 4th failure arms 1 s
			{"a", "u", 500 * time.Millisecond, true, true},
			{"a", "u", 1001 * time.Millisecond, true, false}, // 5th failure arms 2 s
			{"a", "u", 2 * time.Second, false, true},
			{"a", "u", 3002 * time.Millisecond, false, false}, // success clears
			{"a", "u", 3002 * time.Millisecond, true, false},
		}},
		{"another address is not slowed", []attempt{
			{"a", "u", 0, true, false}, {"a", "u", 0, true, false}, {"a", "u", 0, true, false}, {"a", "u", 0, true, false},
			{"b", "u", 0, false, false},
			{"a", "v", 0, false, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := NewThrottle()
			for i, a := range tt.attempts {
				now := t0.Add(a.at)
				if got := th.Check(a.ip, a.user, now) > 0; got != a.wantWait {
					t.Fatalf("attempt %d (%+v): wait %t", i, a, got)
				}
				if a.wantWait {
					continue // refused: nothing is checked, nothing recorded
				}
				if a.fail {
					th.Fail(a.ip, a.user, now)
				} else {
					th.Succeed(a.ip, a.user, now)
				}
			}
		})
	}
}

// TestThrottleSoftUserLock: a guess at one user from many addresses locks
// the user, except from an address the user logged in from before.
func TestThrottleSoftUserLock(t *testing.T) {
	th := NewThrottle()
	now := time.Unix(1800000000, 0)
	th.Succeed("home", "u", now)
	for i := range th.UserFailures + 1 {
		th.Fail("10.0.0."+string(rune('a'+i%26))+string(rune('a'+i/26)), "u", now)
	}
	if th.Check("fresh", "u", now) == 0 {
		t.Error("new address not locked out of a user under a distributed guess")
	}
	if th.Check("home", "u", now) != 0 {
		t.Error("the user's known address was locked out")
	}
	if th.Check("fresh", "other", now) != 0 {
		t.Error("another user was locked")
	}
	if th.Check("fresh", "u", now.Add(th.LockFor+time.Second)) != 0 {
		t.Error("user lock did not expire")
	}
}

func TestThrottleIPSpray(t *testing.T) {
	th := NewThrottle()
	now := time.Unix(1800000000, 0)
	for i := range th.IPFailures + 1 {
		th.Fail("sprayer", "user"+string(rune('a'+i%26))+string(rune('a'+i/26)), now)
	}
	if th.Check("sprayer", "brand-new-user", now) == 0 {
		t.Error("spraying address not locked")
	}
	if th.Check("elsewhere", "brand-new-user", now) != 0 {
		t.Error("other address locked by the sprayer")
	}
}

func TestParseSecretData(t *testing.T) {
	h := hash(t, "pw")
	tests := []struct {
		name    string
		data    map[string][]byte
		wantErr string
		check   func(t *testing.T, u StaticUsers)
	}{
		{"ok", map[string][]byte{
			"alice": h, "alice.namespaces": []byte("a, b"), "alice.selector": []byte("tier=gold"),
			"root": h, "root.namespaces": []byte("*"),
		}, "", func(t *testing.T, u StaticUsers) {
			a := u["alice"].Scope
			gold, plain := map[string]string{"tier": "gold"}, map[string]string(nil)
			for _, c := range []struct {
				ns     string
				labels map[string]string
				want   bool
			}{{"a", gold, true}, {"b", gold, true}, {"a", plain, false}, {"c", gold, false}} {
				if got := a.Allows(system.Key{Namespace: c.ns, Name: "vm"}, c.labels); got != c.want {
					t.Errorf("alice allows %s %v: %t", c.ns, c.labels, got)
				}
			}
			if !u["root"].Scope.Allows(system.Key{Namespace: "zz", Name: "vm"}, nil) {
				t.Error("root does not see everything")
			}
			if u["alice"].IPMIPassword != nil {
				t.Error("alice has an IPMI password without a .ipmi key")
			}
		}},
		{"ipmi password", map[string][]byte{"alice": h, "alice.namespaces": []byte("a"), "alice.ipmi": []byte("ipmi-secret")},
			"", func(t *testing.T, u StaticUsers) {
				if got := string(u["alice"].IPMIPassword); got != "ipmi-secret" {
					t.Errorf("IPMI password %q", got)
				}
			}},
		{"read-only role", map[string][]byte{"alice": h, "alice.namespaces": []byte("a"), "alice.role": []byte("ReadOnly\n"), "bob": h, "bob.namespaces": []byte("a")},
			"", func(t *testing.T, u StaticUsers) {
				if !u["alice"].ReadOnly || u["bob"].ReadOnly {
					t.Errorf("alice ReadOnly %t (want true), bob ReadOnly %t (want false)", u["alice"].ReadOnly, u["bob"].ReadOnly)
				}
			}},
		{"unknown role", map[string][]byte{"alice": h, "alice.namespaces": []byte("a"), "alice.role": []byte("Administrator")}, "the one role", nil},
		{"ipmi password too long", map[string][]byte{"alice": h, "alice.namespaces": []byte("a"), "alice.ipmi": []byte("123456789012345678901")}, "IPMI password has 1 to 20 bytes", nil},
		{"empty ipmi password", map[string][]byte{"alice": h, "alice.namespaces": []byte("a"), "alice.ipmi": {}}, "IPMI password has 1 to 20 bytes", nil},
		{"no namespaces", map[string][]byte{"alice": h}, "namespaces", nil},
		{"empty namespaces", map[string][]byte{"alice": h, "alice.namespaces": []byte(" , ")}, "empty", nil},
		{"not bcrypt", map[string][]byte{"alice": []byte("plaintext"), "alice.namespaces": []byte("a")}, "hash", nil},
		{"bad selector", map[string][]byte{"alice": h, "alice.namespaces": []byte("a"), "alice.selector": []byte("===")}, "selector", nil},
		{"orphan scope", map[string][]byte{"alice.namespaces": []byte("a")}, "no password", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wantErr == "" {
				u, err := ParseSecretData(tt.data)
				if err != nil {
					t.Fatal(err)
				}
				tt.check(t, u)
				return
			}
			// A malformed entry rejects its user only: bob, well formed,
			// stays.
			data := maps.Clone(tt.data)
			data["bob"], data["bob.namespaces"] = h, []byte("b")
			u, err := ParseSecretData(data)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
			}
			if _, ok := u["alice"]; ok {
				t.Error("the malformed user alice was kept")
			}
			if b, ok := u["bob"]; !ok || !b.Scope.AllowsNamespace("b") || len(u) != 1 {
				t.Errorf("users %v, want bob alone (the well-formed entry kept)", slices.Collect(maps.Keys(u)))
			}
		})
	}
}

func TestZeroScopeGrantsNothing(t *testing.T) {
	var s Scope
	if s.Allows(system.Key{Namespace: "a", Name: "b"}, nil) {
		t.Error("zero scope allows")
	}
	s = Scope{Namespaces: []string{"a"}, Selector: labels.Nothing()}
	if s.Allows(system.Key{Namespace: "a", Name: "b"}, nil) {
		t.Error("Nothing selector allows")
	}
}
