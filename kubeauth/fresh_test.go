package kubeauth

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// TestLogoutAcrossReplicas is the attack of docs/reliability.md row 18: two replicas
// on one sessions ConfigMap of the real apiserver.
//
//   - A logout the apiserver refuses (the ConfigMap made immutable) used to
//     end the session on the replica that took it only: the client got a
//     500 and the token still worked on the other replica. Now it is an
//     error the client can act on (auth.ErrUnavailable, 503 Retry-After)
//     and the token stays valid on both, so a retry works.
//   - A logout that succeeded was refused on the other replica only once
//     its watch delivered the event. Now, the moment the logout returns,
//     both refuse the token: checked at once, no polling, many times.
func TestLogoutAcrossReplicas(t *testing.T) {
	kube, ns := adminInNamespace(t)
	users := auth.StaticUsers{"alice": {Name: "alice", PasswordHash: mustHash(t), Scope: auth.Scope{Namespaces: []string{"a"}}}}
	replica := func() *auth.Authenticator {
		revs, err := watchRevocations(t.Context(), kube, ns, revocationsName, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		a, err := auth.New(auth.Config{Users: users, Revocations: revs, Sessions: revs, Key: []byte(strings.Repeat("k", auth.MinKeyLen))})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, b := replica(), replica()
	valid := func(r *auth.Authenticator, tok string) bool {
		t.Helper()
		_, err := r.Token(t.Context(), tok)
		if err != nil && !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("token check: %v", err)
		}
		return err == nil
	}

	t.Run("refused logout", func(t *testing.T) {
		p, tok, err := a.Login(t.Context(), "192.0.2.1", "alice", "pw")
		if err != nil {
			t.Fatal(err)
		}
		immutable := []byte(`{"immutable":true}`)
		if _, err := kube.CoreV1().ConfigMaps(ns).Patch(t.Context(), revocationsName, types.MergePatchType, immutable, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		err = a.Logout(t.Context(), p)
		t.Logf("logout into an immutable ConfigMap: %v", err)
		if !errors.Is(err, auth.ErrUnavailable) {
			t.Errorf("logout the apiserver refused: %v, want auth.ErrUnavailable (503, retry)", err)
		}
		if !valid(a, tok) || !valid(b, tok) {
			t.Errorf("after a refused logout the token is valid on the replica that took it %t, on the other %t; want both", valid(a, tok), valid(b, tok))
		}
		// The ConfigMap writable again (an immutable one can only be
		// replaced): the retry ends the session everywhere.
		if err := kube.CoreV1().ConfigMaps(ns).Delete(t.Context(), revocationsName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: revocationsName, Namespace: ns}}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := a.Logout(t.Context(), p); err != nil {
			t.Fatalf("retried logout: %v", err)
		}
		if valid(a, tok) || valid(b, tok) {
			t.Errorf("after the retried logout the token is valid on the replica that took it %t, on the other %t", valid(a, tok), valid(b, tok))
		}
	})

	t.Run("logout is refused everywhere when it returns", func(t *testing.T) {
		for i := range 20 {
			p, tok, err := a.Login(t.Context(), "192.0.2.1", "alice", "pw")
			if err != nil {
				t.Fatal(err)
			}
			if !valid(b, tok) {
				t.Fatalf("round %d: a fresh token refused on the other replica", i)
			}
			if err := a.Logout(t.Context(), p); err != nil {
				t.Fatalf("round %d: logout: %v", i, err)
			}
			if valid(b, tok) {
				t.Fatalf("round %d: the other replica accepted the token after the logout returned", i)
			}
		}
	})
}

// countingIndexer counts the cache's reads of an object.
type countingIndexer struct {
	cache.Indexer
	reads atomic.Int64
}

func (c *countingIndexer) GetByKey(key string) (any, bool, error) {
	c.reads.Add(1)
	return c.Indexer.GetByKey(key)
}

// TestAwaitCacheWakesOnChange: a confirmation waiting for the cache to
// reach the apiserver's resourceVersion reads the cache again only when the
// informer reports a change, never on a timer (it used to read it every
// 10 ms), and still gives up when its bound ends. In a synctest bubble:
// the clock is fake, and synctest.Wait returns once the waiter is blocked,
// so "no read while nothing changed" is checked after a minute without an
// event, not within a window of time.
func TestAwaitCacheWakesOnChange(t *testing.T) {
	const ns, name = "ns", "revocations"
	at := func(rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
	}
	type step struct {
		cached    string // the version the cache takes, with an event; "": none
		wantReads int64
		wantDone  bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
		bound bool // the wait's context ends after the steps (2 h)
	}{
		{name: "wakes on the change that reaches the version", steps: []step{
			{wantReads: 1},                              // behind, then a minute without events
			{cached: "6", wantReads: 2},                 // a change still behind: one read
			{cached: "7", wantReads: 3, wantDone: true}, // reached
		}},
		{name: "a later version counts", steps: []step{
			{wantReads: 1},
			{cached: "9", wantReads: 2, wantDone: true},
		}},
		{name: "gives up at its bound", bound: true, steps: []step{
			{wantReads: 1},
			{cached: "6", wantReads: 2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				idx := &countingIndexer{Indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
				if err := idx.Add(at("5")); err != nil {
					t.Fatal(err)
				}
				r := &ConfigMapRevocations{namespace: ns, name: name, lister: corelisters.NewConfigMapLister(idx), changed: make(chan struct{})}
				const bound = 2 * time.Hour
				ctx, cancel := context.WithTimeout(t.Context(), bound)
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- r.awaitCache(ctx, "7") }()
				for i, s := range tc.steps {
					if s.cached != "" {
						if err := idx.Update(at(s.cached)); err != nil {
							t.Fatal(err)
						}
						r.notifyChange()
					} else {
						time.Sleep(time.Minute) // the bubble's fake clock
					}
					synctest.Wait()
					var finished bool
					var err error
					select {
					case err = <-done:
						finished = true
					default:
					}
					if got := idx.reads.Load(); got != s.wantReads || finished != s.wantDone || err != nil {
						t.Fatalf("step %d: %d cache reads, finished %t (%v); want %d reads, finished %t", i, got, finished, err, s.wantReads, s.wantDone)
					}
					if finished {
						return
					}
				}
				if !tc.bound {
					t.Fatal("the wait did not finish")
				}
				time.Sleep(bound)
				if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("after its bound the wait returned %v, want context.DeadlineExceeded", err)
				}
			})
		})
	}
}
