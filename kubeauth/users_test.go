package kubeauth

import (
	"context"
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

// slowHandler is a slog.Handler that takes its time with every record.
type slowHandler struct{ slog.Handler }

func (h slowHandler) Handle(ctx context.Context, r slog.Record) error {
	time.Sleep(300 * time.Millisecond)
	return h.Handler.Handle(ctx, r)
}

// TestSecretUsersReadAtStart: WatchSecretUsers returns once its handler
// has read the Secret, not once the informer's store holds it (handlers
// run on a goroutine of their own): a bridge started on a loaded machine
// answered "users secret ... not found" for a Secret that existed. A slow
// logger makes the handler (which warns about a malformed entry before it
// records the users) late every time.
func TestSecretUsersReadAtStart(t *testing.T) {
	kube, ns := adminInNamespace(t)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "users", Namespace: ns}, Data: map[string][]byte{
		"bob": []byte("plaintext"), "bob.namespaces": []byte("b"),
	}}
	if _, err := kube.CoreV1().Secrets(ns).Create(t.Context(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slowHandler{slog.NewTextHandler(t.Output(), nil)})
	if _, err := WatchSecretUsers(logctx.Into(t.Context(), log), kube, ns, "users"); err != nil {
		t.Fatalf("the Secret exists: %v", err)
	}
}
