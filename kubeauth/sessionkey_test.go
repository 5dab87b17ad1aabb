package kubeauth

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// TestSessionKeyLength: a session-key Secret shorter than the signer's
// 32 bytes is refused with a message saying so, at read; a missing one is
// created with a key the signer takes.
func TestSessionKeyLength(t *testing.T) {
	kube, ns := adminInNamespace(t)
	for _, n := range []int{16, auth.MinKeyLen - 1} {
		name := "short-" + string(rune('a'+n%26))
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data: map[string][]byte{SessionKeyField: make([]byte, n)}}
		if _, err := kube.CoreV1().Secrets(ns).Create(t.Context(), sec, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if key, err := SessionKey(t.Context(), kube, ns, name); err == nil {
			t.Errorf("a %d-byte session key was accepted (%d bytes)", n, len(key))
		}
	}
	key, err := SessionKey(t.Context(), kube, ns, "created")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.New(auth.Config{Users: auth.StaticUsers{}, Revocations: &testutil.MemoryRevocations{}, Key: key}); err != nil {
		t.Errorf("the created session key does not sign: %v", err)
	}
}
