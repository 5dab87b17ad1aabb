package kubeauth

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// TestOpenSessionsAcrossReplicas runs two replicas on one sessions
// ConfigMap of the real apiserver: a session opened on one is listed by
// the other, which can end it (an Administrator's DELETE), and then the
// token stops working on both and the open record is gone.
func TestOpenSessionsAcrossReplicas(t *testing.T) {
	kube, ns := adminInNamespace(t)
	users := auth.StaticUsers{"alice": {Name: "alice", PasswordHash: mustHash(t), Scope: auth.Scope{Namespaces: []string{"a"}}}}
	replica := func() (*auth.Authenticator, *ConfigMapRevocations) {
		revs, err := WatchConfigMapRevocations(t.Context(), kube, ns, revocationsName)
		if err != nil {
			t.Fatal(err)
		}
		a, err := auth.New(auth.Config{Users: users, Revocations: revs, Sessions: revs, Key: []byte(strings.Repeat("k", auth.MinKeyLen))})
		if err != nil {
			t.Fatal(err)
		}
		return a, revs
	}
	one, revsOne := replica()
	two, revsTwo := replica()
	p, tok, err := one.Login(t.Context(), "192.0.2.1", "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	listed := func(a *auth.Authenticator) bool {
		ss, err := a.OpenSessions(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			if s.ID == p.Session && s.User == "alice" && s.Expires.Equal(p.Expires) {
				return true
			}
		}
		return false
	}
	if !listed(one) {
		t.Fatal("the replica that opened the session does not list it")
	}
	eventually(t, "the other replica lists the session", func() bool { return listed(two) }, revsTwo)
	if err := two.End(t.Context(), p.Session); err != nil {
		t.Fatalf("end the session on the other replica: %v", err)
	}
	eventually(t, "the token refused on the replica that issued it", func() bool {
		_, err := one.Token(t.Context(), tok)
		return errors.Is(err, auth.ErrInvalidToken)
	}, revsOne)
	eventually(t, "the session no longer listed", func() bool { return !listed(one) && !listed(two) }, revsOne, revsTwo)
	if err := two.End(t.Context(), p.Session); !errors.Is(err, auth.ErrNoSuchSession) {
		t.Errorf("end an ended session: %v, want ErrNoSuchSession", err)
	}
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), revocationsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data[openKey(p.Session)]; ok || cm.Data[p.Session] == "" {
		t.Errorf("ConfigMap after the end: %v, want the revocation and no open record", cm.Data)
	}
}

// TestOpenSessionsBounded: at the bound a login is refused (no session
// that an administrator could not list), and expired open records are
// pruned by the next write.
func TestOpenSessionsBounded(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	data := liveEntries(2, now.Add(time.Hour))
	data[openKey("old")] = now.Add(-time.Minute).UTC().Format(time.RFC3339) + " bob"
	r := newRevocationsRig(t, data, now)
	a, err := auth.New(auth.Config{Users: auth.StaticUsers{"alice": {Name: "alice", PasswordHash: mustHash(t), Scope: auth.Scope{Namespaces: []string{"a"}}}},
		Revocations: r.revs, Sessions: r.revs, Key: []byte(strings.Repeat("k", auth.MinKeyLen)), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	r.revs.max = 3
	p, _, err := a.Login(t.Context(), "192.0.2.1", "alice", "pw")
	if err != nil {
		t.Fatalf("login under the bound: %v", err)
	}
	got := r.data(t)
	if _, ok := got[openKey("old")]; ok || got[openKey(p.Session)] == "" || len(got) != 3 {
		t.Errorf("ConfigMap after a login: %v, want the expired record pruned and the new one added", got)
	}
	// The cache held 3 entries before the login too (2 live, "old"): wait
	// for the login's own record, not a count.
	eventually(t, "the revocations cache to show the login's record", func() bool {
		cm, err := r.revs.lister.ConfigMaps(r.ns).Get(revocationsName)
		return err == nil && cm.Data[openKey(p.Session)] != "" && cm.Data[openKey("old")] == ""
	}, r.revs)
	if _, _, err := a.Login(t.Context(), "192.0.2.1", "alice", "pw"); !errors.Is(err, ErrRevocationsFull) || !errors.Is(err, auth.ErrSessionLimit) {
		t.Errorf("login at the bound: %v, want ErrRevocationsFull and auth.ErrSessionLimit", err)
	}
}

func mustHash(t *testing.T) []byte {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

// eventually waits until cond holds, checking it again at each change the
// caches of revs show (no polling, no window of time): cond must depend on
// what those caches hold. The deadline is a safety net only.
func eventually(t *testing.T, what string, cond func() bool, revs ...*ConfigMapRevocations) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(deadline)}}
		for _, r := range revs {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.nextChange())})
		}
		if cond() { // after taking the channels: no change is missed
			return
		}
		if i, _, _ := reflect.Select(cases); i == 0 {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestOpenSessionsPerUser: one user at its bound (counted in the sessions
// ConfigMap) is refused, another user still logs in though the store has
// room for only a few more (docs/reliability.md row 17).
func TestOpenSessionsPerUser(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	r := newRevocationsRig(t, map[string]string{}, now)
	r.revs.max = 4
	users := auth.StaticUsers{
		"alice": {Name: "alice", PasswordHash: mustHash(t), Scope: auth.Scope{Namespaces: []string{"a"}}},
		"bob":   {Name: "bob", PasswordHash: mustHash(t), Scope: auth.Scope{Namespaces: []string{"b"}}},
	}
	a, err := auth.New(auth.Config{Users: users, Revocations: r.revs, Sessions: r.revs, Key: []byte(strings.Repeat("k", auth.MinKeyLen)),
		Now: func() time.Time { return now }, MaxSessionsPerUser: 2})
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	for range 4 {
		if _, _, err := a.Login(t.Context(), "192.0.2.1", "alice", "pw"); err == nil {
			opened++
		} else if !errors.Is(err, auth.ErrSessionLimit) {
			t.Fatalf("alice's login: %v", err)
		}
	}
	if opened != 2 {
		t.Errorf("alice opened %d sessions, want her bound 2", opened)
	}
	if _, _, err := a.Login(t.Context(), "192.0.2.2", "bob", "pw"); err != nil {
		t.Errorf("bob's login while alice is at her bound: %v", err)
	}
}

// TestLoginLogoutCyclesStayWithinTheUser is docs/reliability.md row 111:
// revocations named no user, so one user's login/logout cycles filled the
// ConfigMap (10,000 entries in ~19 minutes within the user's write share)
// and then every user's login and logout was refused. Every entry now
// counts against its user: the cycling user is refused at its bound (its
// logouts still work: a logout replaces its session's entry), and
// another user logs in and out.
func TestLoginLogoutCyclesStayWithinTheUser(t *testing.T) {
	kube, ns := adminInNamespace(t)
	revs, err := watchRevocations(t.Context(), kube, ns, revocationsName, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	revs.max, revs.maxPerUser = 12, 4
	users := auth.StaticUsers{
		"mallory": {Name: "mallory", PasswordHash: mustHash(t), Scope: auth.Scope{Namespaces: []string{"m"}}},
		"bob":     {Name: "bob", PasswordHash: mustHash(t), Scope: auth.Scope{Namespaces: []string{"b"}}},
	}
	a, err := auth.New(auth.Config{Users: users, Revocations: revs, Sessions: revs, Key: []byte(strings.Repeat("k", auth.MinKeyLen)), MaxSessionsPerUser: -1})
	if err != nil {
		t.Fatal(err)
	}
	cycles := 0
	for range revs.max + 1 {
		p, _, err := a.Login(t.Context(), "192.0.2.66", "mallory", "pw")
		if errors.Is(err, auth.ErrSessionLimit) {
			break
		}
		if err != nil {
			t.Fatalf("mallory's login %d: %v", cycles+1, err)
		}
		cycles++
		if cycles == revs.maxPerUser {
			// At the bound with this session open: its logout still works.
			if err := a.Logout(t.Context(), p); err != nil {
				t.Fatalf("mallory's logout at her bound: %v", err)
			}
			continue
		}
		if err := a.Logout(t.Context(), p); err != nil {
			t.Fatalf("mallory's logout %d: %v", cycles, err)
		}
	}
	if cycles != revs.maxPerUser {
		t.Errorf("mallory completed %d login/logout cycles before a refusal, want her bound %d", cycles, revs.maxPerUser)
	}
	p, _, err := a.Login(t.Context(), "192.0.2.2", "bob", "pw")
	if err != nil {
		t.Fatalf("bob's login after mallory's cycles: %v", err)
	}
	if err := a.Logout(t.Context(), p); err != nil {
		t.Errorf("bob's logout after mallory's cycles: %v", err)
	}
}
