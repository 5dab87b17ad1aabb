package kubeauth

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
