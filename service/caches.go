package service

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/kubeauth"
	"github.com/redfish-bridge/redfish-bridge/manager"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// caches are what the bridge reads before it serves. The manager's Caches
// group fills them, all at once (the users, session key and revocations
// load while the inventory lists every VM, seconds with thousands of
// them); they are set once [manager.Manager.Start] returned.
type caches struct {
	mode  apply.Mode
	inv   *inventory.Inventory
	trust *media.TrustCache // the slots' trust ConfigMaps the bridge signed: GETs of VirtualMedia and Certificates read no apiserver
	authn *auth.Authenticator
	users auth.Users       // the accounts authn checks, for the event delivery's scopes
	revs  auth.Revocations // the sessions logged out, on every replica (open consoles end with theirs)
	key   []byte           // the session key: session tokens and the bridge's object MACs are keyed from it
	// subs are the EventService's subscriptions (their Secret, watched):
	// a GET of them reads no apiserver.
	subs *eventsub.Watcher
}

// addCaches adds the parts that fill c to the Caches group.
func addCaches(mgr *manager.Manager, cl clients, cfg Config) (*caches, error) {
	c := &caches{}
	for _, start := range []func(ctx context.Context) error{
		func(ctx context.Context) (err error) {
			if c.mode, err = apply.DetectMode(ctx, cl.dyn); err != nil {
				return fmt.Errorf("detect list mode: %w", err)
			}
			return nil
		},
		func(ctx context.Context) (err error) {
			// The session key signs session tokens and, keyed apart, the
			// objects the bridge acts on (trust ConfigMaps): every replica
			// has it, no tenant does.
			if c.key, err = kubeauth.SessionKey(ctx, cl.kube, cfg.Namespace, cfg.SessionKeySecret); err != nil {
				return err
			}
			if c.authn, c.users, c.revs, err = authenticator(ctx, cl.kube, cfg, c.key); err != nil {
				return err
			}
			if c.trust, err = media.StartTrustCache(ctx, cl.kube, cfg.Namespaces, c.key); err != nil {
				return fmt.Errorf("start trust cache: %w", err)
			}
			return nil
		},
		func(ctx context.Context) (err error) {
			c.subs, err = eventsub.Watch(ctx, cl.kube, cfg.Namespace, cfg.Events.WithDefaults().Secret)
			return err
		},
		func(ctx context.Context) (err error) {
			if c.inv, err = inventory.Start(ctx, cl.dyn, cl.kube, cfg.Namespaces); err != nil {
				return fmt.Errorf("start inventory: %w", err)
			}
			return nil
		},
	} {
		if err := mgr.Add(manager.CacheFunc(start), manager.Caches); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// authenticator watches the users and the sessions' revocations, in
// cfg.Namespace, and signs session tokens with key.
func authenticator(ctx context.Context, kube kubernetes.Interface, cfg Config, key []byte) (*auth.Authenticator, auth.Users, auth.Revocations, error) {
	users, err := kubeauth.WatchSecretUsers(ctx, kube, cfg.Namespace, cfg.UsersSecret)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("users: %w", err)
	}
	revs, err := kubeauth.WatchConfigMapRevocations(ctx, kube, cfg.Namespace, cfg.RevocationsConfigMap)
	if err != nil {
		return nil, nil, nil, err
	}
	a, err := auth.New(auth.Config{Users: users, Revocations: revs, Sessions: revs, Key: key, MaxSessionsPerUser: cfg.MaxSessionsPerUser})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("authenticator: %w", err)
	}
	return a, users, revs, nil
}
