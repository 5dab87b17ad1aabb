package kubeauth

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/internal/watchone"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// SecretUsers serves auth.Users from one watched Secret.
type SecretUsers struct {
	mu    sync.RWMutex
	users auth.StaticUsers
	err   error
}

// WatchSecretUsers starts watching namespace/name and waits for the first
// read. A Secret that is missing or deleted makes every lookup fail (and is
// reported through the returned error at start). A malformed entry rejects
// that user only (see auth.ParseSecretData): the others keep working, and
// ctx's logger (logctx) receives one warning per rejected entry each time
// the Secret is read.
func WatchSecretUsers(ctx context.Context, kube kubernetes.Interface, namespace, name string) (*SecretUsers, error) {
	log := logctx.From(ctx)
	s := &SecretUsers{err: fmt.Errorf("users secret %s/%s not found", namespace, name)}
	err := watchone.Secret(ctx, kube, namespace, name, watchone.Handlers[*corev1.Secret]{
		Set: func(sec *corev1.Secret) {
			users, err := auth.ParseSecretData(sec.Data)
			if err != nil {
				log.WarnContext(ctx, "users secret: malformed entries rejected, the other users are served",
					"secret", namespace+"/"+name, "users", len(users), "rejected", err.Error())
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			s.users, s.err = users, nil
		},
		Deleted: func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.users, s.err = nil, fmt.Errorf("users secret %s/%s was deleted", namespace, name)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watch users secret: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s, s.err
}

// Lookup implements auth.Users.
func (s *SecretUsers) Lookup(ctx context.Context, name string) (auth.User, error) {
	s.mu.RLock()
	users, err := s.users, s.err
	s.mu.RUnlock()
	if err != nil {
		return auth.User{}, err
	}
	return users.Lookup(ctx, name)
}
