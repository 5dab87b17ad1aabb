package kubeauth

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// requestCounts counts what a client sends: PATCHes, and confirmations
// of the sessions cache (fresh.go's metadata-only reads).
type requestCounts struct{ patches, confirms atomic.Int64 }

// countingAdmin is adminInNamespace counting the client's requests.
func countingAdmin(t *testing.T) (kubernetes.Interface, string, *requestCounts) {
	t.Helper()
	c := testcluster.Shared(t, crds.Stock)
	cfg := rest.CopyConfig(c.Admin)
	var n requestCounts
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			switch {
			case r.Method == http.MethodPatch:
				n.patches.Add(1)
			case strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadataList"):
				n.confirms.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kube, c.TestNamespace(t), &n
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSessionInactivityAcrossReplicas is docs/reliability.md row 112
// (issue #41): a session ended 30 minutes after its login however busy
// (Ironic got a 401 mid-deploy), though Redfish's SessionTimeout is an
// inactivity timeout. Two replicas share the sessions ConfigMap of the
// real apiserver: a session used only on replica B for 45 minutes is
// still open on replica A, having cost at most one write per tenth of the
// timeout; unused for the timeout (plus that tenth) it ends on both; and
// a use racing a logout never brings the session back.
func TestSessionInactivityAcrossReplicas(t *testing.T) {
	kube, ns, counts := countingAdmin(t)
	patches := &counts.patches
	clock := testutil.NewClock(time.Now().Truncate(time.Second))
	users := auth.StaticUsers{"ironic": {Name: "ironic", PasswordHash: mustHash(t), Scope: auth.Scope{Namespaces: []string{"a"}}}}
	const ttl = 30 * time.Minute
	replica := func() (*auth.Authenticator, *ConfigMapRevocations) {
		revs, err := watchRevocations(t.Context(), kube, ns, revocationsName, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		revs.now = clock.Now
		a, err := auth.New(auth.Config{Users: users, Revocations: revs, Sessions: revs, SessionTTL: ttl,
			Key: []byte(strings.Repeat("k", auth.MinKeyLen)), Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return a, revs
	}
	a, _ := replica()
	b, revsB := replica()
	p, tok, err := a.Login(t.Context(), "192.0.2.1", "ironic", "pw")
	if err != nil {
		t.Fatal(err)
	}
	before := patches.Load()
	// Used on B only, a request every 20 s for 45 minutes.
	const step, busy = 20 * time.Second, 45 * time.Minute
	for elapsed := time.Duration(0); elapsed < busy; elapsed += step {
		clock.Add(step)
		if _, err := b.Token(t.Context(), tok); err != nil {
			t.Fatalf("request on B %s after the login: %v", elapsed+step, err)
		}
	}
	touches := patches.Load() - before
	maxTouches := int64(busy/(ttl/10)) + 1
	t.Logf("%d requests on B over %s: %d writes (at most one per %s: %d)", busy/step, busy, touches, ttl/10, maxTouches)
	if touches > maxTouches {
		t.Errorf("%d requests on B over %s wrote the apiserver %d times, want at most %d", busy/step, busy, touches, maxTouches)
	}
	if _, err := a.Token(t.Context(), tok); err != nil {
		t.Fatalf("on A, %s after the login, the session B kept in use: %v", busy, err)
	}
	// Unused for the timeout and its tenth: ended on both replicas.
	clock.Add(ttl + ttl/10 + time.Second)
	for name, r := range map[string]*auth.Authenticator{"A": a, "B": b} {
		if _, err := r.Token(t.Context(), tok); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("on %s after %s unused: %v, want ErrInvalidToken", name, ttl+ttl/10+time.Second, err)
		}
	}
	// A second session: logged out on A, B's touch of it fails and does
	// not record it again.
	p, tok, err = a.Login(t.Context(), "192.0.2.1", "ironic", "pw")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Token(t.Context(), tok); err != nil {
		t.Fatalf("the new session on B: %v", err)
	}
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), revocationsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := cm.Data[openKey(p.Session)] // what a replica with a stale cache would test against
	if err := a.Logout(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if err := revsB.replace(t.Context(), openKey(p.Session), seen, entryValue(auth.Session{ID: p.Session, User: "ironic", Expires: clock.Now().Add(ttl)})); err == nil {
		t.Error("a touch's patch of the session's value as seen before the logout succeeded")
	}
	err = revsB.Touch(t.Context(), auth.Session{ID: p.Session, User: "ironic", Expires: clock.Now().Add(ttl)})
	if !errors.Is(err, auth.ErrNoSuchSession) {
		t.Errorf("touch after the logout: %v, want ErrNoSuchSession", err)
	}
	cm, err = kube.CoreV1().ConfigMaps(ns).Get(t.Context(), revocationsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := cm.Data[openKey(p.Session)]; ok {
		t.Errorf("the logged-out session recorded open again: %q", v)
	}
	if _, err := b.Token(t.Context(), tok); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("on B after the logout on A: %v, want ErrInvalidToken", err)
	}
}

// TestEndedSessionReplayCostsOneRead: a session found ended (unused past
// the timeout) in a confirmed view is remembered, so a client replaying
// its token costs no quorum read after the first.
func TestEndedSessionReplayCostsOneRead(t *testing.T) {
	kube, ns, counts := countingAdmin(t)
	clock := testutil.NewClock(time.Now().Truncate(time.Second))
	// A lag of an hour: no background confirmations during the test.
	revs, err := watchRevocations(t.Context(), kube, ns, revocationsName, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	revs.now = clock.Now
	a, err := auth.New(auth.Config{Users: auth.StaticUsers{"ironic": {Name: "ironic", PasswordHash: mustHash(t), Scope: auth.Scope{Namespaces: []string{"a"}}}},
		Revocations: revs, Sessions: revs, Key: []byte(strings.Repeat("k", auth.MinKeyLen)), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, tok, err := a.Login(t.Context(), "192.0.2.1", "ironic", "pw")
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Hour)
	// The first use finds it ended (confirming the cache), the replays
	// read nothing.
	if _, err := a.Token(t.Context(), tok); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("the ended session's token: %v, want ErrInvalidToken", err)
	}
	before := counts.confirms.Load()
	for i := range 20 {
		if _, err := a.Token(t.Context(), tok); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("replay %d of the ended session's token: %v, want ErrInvalidToken", i, err)
		}
	}
	if got := counts.confirms.Load() - before; got > 0 {
		t.Errorf("20 replays of an ended session's token made %d quorum reads, want none", got)
	}
}
