package kubeauth

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// TestSecretUsersMalformedEntry: one malformed entry (a plaintext password
// where a bcrypt hash belongs) used to make every lookup fail, so every
// request answered 500. It rejects that user only; fixing the entry
// brings the user back without a restart.
func TestSecretUsersMalformedEntry(t *testing.T) {
	kube, ns := adminInNamespace(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "users", Namespace: ns}, Data: map[string][]byte{
		"alice": hash, "alice.namespaces": []byte("a"),
		"bob": []byte("plaintext"), "bob.namespaces": []byte("b"),
	}}
	if sec, err = kube.CoreV1().Secrets(ns).Create(t.Context(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	users, err := WatchSecretUsers(logctx.Into(t.Context(), slog.New(slog.NewTextHandler(t.Output(), nil))), kube, ns, "users")
	if err != nil {
		t.Fatalf("a malformed entry failed the whole Secret: %v", err)
	}
	if u, err := users.Lookup(t.Context(), "alice"); err != nil || !u.Scope.AllowsNamespace("a") {
		t.Errorf("alice next to a malformed entry: %+v, %v", u, err)
	}
	if _, err := users.Lookup(t.Context(), "bob"); !errors.Is(err, auth.ErrNoSuchUser) {
		t.Errorf("malformed bob: %v, want ErrNoSuchUser (401, not 500)", err)
	}
	sec.Data["bob"] = hash
	if _, err := kube.CoreV1().Secrets(ns).Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := users.Lookup(t.Context(), "bob")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob after his entry was fixed: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
