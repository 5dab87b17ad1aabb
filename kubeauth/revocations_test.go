package kubeauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

const revocationsName = "redfish-bridge-sessions"

// revocationsRig is a namespace on the shared cluster holding a
// revocations ConfigMap with the given entries, watched by a
// ConfigMapRevocations, and an Authenticator using it.
type revocationsRig struct {
	kube kubernetes.Interface
	ns   string
	revs *ConfigMapRevocations
	a    *auth.Authenticator
}

func newRevocationsRig(t *testing.T, data map[string]string, now time.Time) *revocationsRig {
	t.Helper()
	kube, ns := adminInNamespace(t)
	if data != nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: revocationsName, Namespace: ns}, Data: data}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	revs, err := WatchConfigMapRevocations(t.Context(), kube, ns, revocationsName)
	if err != nil {
		t.Fatal(err)
	}
	revs.now = func() time.Time { return now }
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(auth.Config{
		Users:       auth.StaticUsers{"alice": {Name: "alice", PasswordHash: hash, Scope: auth.Scope{Namespaces: []string{"a"}}}},
		Revocations: revs, Key: []byte(strings.Repeat("k", auth.MinKeyLen)), Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return &revocationsRig{kube: kube, ns: ns, revs: revs, a: a}
}

// logInOut logs alice in, checks the token, logs out and returns the
// logout's error and whether the token is still accepted afterwards.
func (r *revocationsRig) logInOut(t *testing.T) (logoutErr error, stillValid bool) {
	t.Helper()
	p, tok, err := r.a.Login(t.Context(), "192.0.2.1", "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.a.Token(t.Context(), tok); err != nil {
		t.Fatalf("fresh token refused: %v", err)
	}
	logoutErr = r.a.Logout(t.Context(), p)
	_, err = r.a.Token(t.Context(), tok)
	if err != nil && !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("token check after logout: %v", err)
	}
	return logoutErr, err == nil
}

func (r *revocationsRig) data(t *testing.T) map[string]string {
	t.Helper()
	cm, err := r.kube.CoreV1().ConfigMaps(r.ns).Get(t.Context(), revocationsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// liveEntries are n revocations valid until until, as logouts write them.
func liveEntries(n int, until time.Time) map[string]string {
	d := make(map[string]string, n)
	for i := range n {
		d[fmt.Sprintf("%032x", i)] = until.UTC().Format(time.RFC3339)
	}
	return d
}

// TestRevocationsFailClosed is the attack of docs/reliability.md row 6: logouts fill
// the revocations ConfigMap until etcd refuses it (its 1.5 MiB request
// limit); a logout then must say it failed (auth.ErrUnavailable, 503) and
// end the session nowhere, so that every replica agrees and a retry works
// (docs/reliability.md row 18). Run on the
// real apiserver and etcd, which set the limit.
func TestRevocationsFailClosed(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	r := newRevocationsRig(t, map[string]string{}, now)
	n := fillUntilRefused(t, r, now.Add(time.Hour))
	t.Logf("the ConfigMap refuses a revocation at %d live entries", n)
	r.revs.max = n + 1 // the bound off: let the write reach etcd's limit
	waitEntries(t, r, n)
	err, valid := r.logInOut(t)
	if err == nil {
		t.Fatal("logout into a full ConfigMap reported success")
	}
	t.Logf("logout answered: %v", err)
	if !errors.Is(err, auth.ErrUnavailable) {
		t.Errorf("logout into a full ConfigMap: %v, want auth.ErrUnavailable", err)
	}
	if !valid {
		t.Error("a logout the ConfigMap refused ended the session on this replica only")
	}
}

// fillUntilRefused adds live entries (as logouts write them) in shrinking
// batches until the apiserver refuses even one more, and returns how many
// the ConfigMap holds.
func fillUntilRefused(t *testing.T, r *revocationsRig, until time.Time) int {
	t.Helper()
	n := 0
	for _, batch := range []int{4000, 1000, 100, 10, 1} {
		for {
			d := map[string]any{}
			for i := range batch {
				d[fmt.Sprintf("%032x", n+i)] = until.UTC().Format(time.RFC3339)
			}
			patch, err := json.Marshal(map[string]any{"data": d})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.kube.CoreV1().ConfigMaps(r.ns).Patch(t.Context(), revocationsName, types.MergePatchType, patch,
				metav1.PatchOptions{FieldManager: "redfish-sessions"})
			if err != nil {
				if n == 0 || !apierrors.IsRequestEntityTooLargeError(err) && !apierrors.IsInvalid(err) && !apierrors.IsInternalError(err) {
					t.Fatalf("fill revocations at %d entries: %v", n, err)
				}
				break
			}
			n += batch
		}
	}
	return n
}

// waitEntries waits until the revocations' cache holds n entries.
func waitEntries(t *testing.T, r *revocationsRig, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("the revocations cache to show %d entries", n), func() bool {
		cm, err := r.revs.lister.ConfigMaps(r.ns).Get(revocationsName)
		return err == nil && len(cm.Data) == n
	}, r.revs)
}

// TestRevocationsBounded: at MaxRevocations unexpired entries a logout is
// not written (the ConfigMap stops growing) and ends the session nowhere.
func TestRevocationsBounded(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	r := newRevocationsRig(t, liveEntries(5, now.Add(time.Hour)), now)
	r.revs.max = 5
	err, valid := r.logInOut(t)
	if !errors.Is(err, ErrRevocationsFull) {
		t.Errorf("logout at the bound: %v, want ErrRevocationsFull", err)
	}
	if !valid {
		t.Error("a logout refused at the bound ended the session on this replica only")
	}
	if n := len(r.data(t)); n != 5 {
		t.Errorf("ConfigMap holds %d entries, want the 5 it had", n)
	}
}

// TestRevocationsExpire: a logout drops every entry whose token has
// expired, keeps the live ones and adds its own.
func TestRevocationsExpire(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	data := liveEntries(3, now.Add(-time.Second))
	data["live"] = now.Add(time.Minute).UTC().Format(time.RFC3339)
	data["garbage"] = "not a time"
	r := newRevocationsRig(t, data, now)
	err, valid := r.logInOut(t)
	if err != nil || valid {
		t.Fatalf("logout: %v, token still valid %t", err, valid)
	}
	got := r.data(t)
	if len(got) != 2 || got["live"] == "" {
		t.Errorf("ConfigMap after the logout: %v, want the live entry and the new one", got)
	}
}
