package kubeauth

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// SessionKeyField is the Secret data key holding the session signing key.
const SessionKeyField = "session-key"

// SessionKey reads the session signing key from namespace/name. When the
// Secret does not exist it creates one with 32 random bytes; replicas racing
// to create it all end up reading the one that won.
func SessionKey(ctx context.Context, kube kubernetes.Interface, namespace, name string) ([]byte, error) {
	secrets := kube.CoreV1().Secrets(namespace)
	sec, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		key := make([]byte, auth.MinKeyLen)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generate session key: %w", err)
		}
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "redfish-bridge"}},
			Data:       map[string][]byte{SessionKeyField: key},
		}
		if _, err = secrets.Create(ctx, sec, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			return SessionKey(ctx, kube, namespace, name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("session key secret %s/%s: %w", namespace, name, err)
	}
	key := sec.Data[SessionKeyField]
	if len(key) < auth.MinKeyLen {
		return nil, fmt.Errorf("session key secret %s/%s: %q holds %d bytes, the token signer needs at least %d (HMAC-SHA256)",
			namespace, name, SessionKeyField, len(key), auth.MinKeyLen)
	}
	return key, nil
}
