package kubeauth

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
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
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	inf := f.Core().V1().Secrets().Informer()
	set := func(obj any) {
		sec, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		users, err := auth.ParseSecretData(sec.Data)
		if err != nil {
			log.WarnContext(ctx, "users secret: malformed entries rejected, the other users are served",
				"secret", namespace+"/"+name, "users", len(users), "rejected", err.Error())
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.users, s.err = users, nil
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(any) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.users, s.err = nil, fmt.Errorf("users secret %s/%s was deleted", namespace, name)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watch users secret: %w", err)
	}
	f.Start(ctx.Done())
	// The registration's HasSynced, not the informer's: handlers run on
	// their own goroutine, so the informer's store can hold the Secret
	// before set has read it.
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return nil, fmt.Errorf("watch users secret %s/%s: cache did not sync", namespace, name)
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
