package kubeauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// MaxRevocations bounds the sessions a revocations ConfigMap records at
// once: an entry is ~62 bytes (a 32-character session id and an RFC 3339
// time), so 10000 stay near 620 KB, well under the apiserver's 1 MiB limit
// on a ConfigMap. Entries leave when their token expires (30 minutes by
// default), so the bound is ~5 logouts per second sustained.
const MaxRevocations = 10000

// ErrRevocationsFull is returned by a revoke that found the ConfigMap
// holding [MaxRevocations] unexpired sessions.
var ErrRevocationsFull = errors.New("session revocations full")

// ConfigMapRevocations implements auth.Revocations with one ConfigMap whose
// keys are ended session ids and whose values are RFC 3339 expiry times,
// and auth.Sessions in the same ConfigMap (see sessions.go).
//
// A revoke is a JSON merge patch of a single key: a merge patch on a map
// touches only the keys it names, so concurrent revokes from several
// replicas never overwrite each other (unlike a list, a map needs no
// ownership bookkeeping here). Expired keys are removed with the next
// revoke (a null in a merge patch deletes the key).
//
// A revoke takes effect everywhere or nowhere: a logout the ConfigMap
// cannot take (full, too large for the apiserver, apiserver down) returns
// the error and leaves the token valid on every replica, so that the
// client can retry it; a revoke that returns nil is refused by every
// replica (fresh.go).
type ConfigMapRevocations struct {
	kube            kubernetes.Interface
	namespace, name string
	lister          corelisters.ConfigMapLister
	now             func() time.Time
	// max is [MaxRevocations] outside tests.
	max int

	// lag is [RevocationLag] outside tests (fresh.go).
	lag time.Duration

	// confirmMu serialises confirmations of the cache (fresh.go).
	confirmMu sync.Mutex

	mu     sync.Mutex
	local  map[string]time.Time    // this replica's revokes, until their tokens expire
	opened map[string]auth.Session // this replica's logins, until they expire
	// confirmed is when the last read was sent that the cache has since
	// caught up with (fresh.go).
	confirmed time.Time
	// changed is closed at the cache's next change of the ConfigMap
	// (fresh.go).
	changed chan struct{}
}

// WatchConfigMapRevocations watches namespace/name (created on first revoke).
func WatchConfigMapRevocations(ctx context.Context, kube kubernetes.Interface, namespace, name string) (*ConfigMapRevocations, error) {
	return watchRevocations(ctx, kube, namespace, name, RevocationLag)
}

// watchRevocations is [WatchConfigMapRevocations] with the lag of
// fresh.go (shorter in tests).
func watchRevocations(ctx context.Context, kube kubernetes.Interface, namespace, name string, lag time.Duration) (*ConfigMapRevocations, error) {
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	inf := f.Core().V1().ConfigMaps()
	r := &ConfigMapRevocations{kube: kube, namespace: namespace, name: name, lister: inf.Lister(), now: time.Now,
		max: MaxRevocations, lag: lag, local: map[string]time.Time{}, opened: map[string]auth.Session{}, changed: make(chan struct{})}
	informer := inf.Informer()
	if _, err := informer.AddEventHandler(r.changeHandler()); err != nil {
		return nil, fmt.Errorf("watch session revocations %s/%s: %w", namespace, name, err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil, fmt.Errorf("watch session revocations %s/%s: cache did not sync", namespace, name)
	}
	go r.keepFresh(ctx)
	return r, nil
}

// Revoke implements auth.Revocations. It also drops the session's open
// record ([ConfigMapRevocations.Opened]). It returns once every replica
// refuses the session's token (after [RevocationLag], fresh.go); a
// revocation the ConfigMap refuses is an error and changes nothing, here
// or elsewhere, so the client can retry with the same token.
func (r *ConfigMapRevocations) Revoke(ctx context.Context, id string, until time.Time) error {
	err := r.write(ctx, map[string]any{id: until.UTC().Format(time.RFC3339), openKey(id): nil}, id)
	if err != nil {
		return fmt.Errorf("revoke session (not ended anywhere): %w", err)
	}
	r.remember(id, until, r.now())
	return r.settle(ctx)
}

// write merge-patches set into the ConfigMap (creating it), with a null
// for every expired entry; key is the entry set adds, not counted against
// the bound.
func (r *ConfigMapRevocations) write(ctx context.Context, set map[string]any, key string) error {
	now := r.now()
	data := map[string]any{}
	live := 0
	if cm, err := r.lister.ConfigMaps(r.namespace).Get(r.name); err == nil {
		for k, v := range cm.Data {
			if t, err := entryExpiry(v); err != nil || !t.After(now) {
				data[k] = nil
			} else if k != key {
				live++
			}
		}
	}
	if live >= r.max {
		return fmt.Errorf("%s/%s: %w: %d unexpired sessions recorded, at most %d", r.namespace, r.name, ErrRevocationsFull, live, r.max)
	}
	maps.Copy(data, set)
	patch, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return fmt.Errorf("encode session record: %w", err)
	}
	_, err = r.kube.CoreV1().ConfigMaps(r.namespace).Patch(ctx, r.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "redfish-sessions"})
	if apierrors.IsNotFound(err) {
		initial := map[string]string{}
		for k, v := range set {
			if v, ok := v.(string); ok {
				initial[k] = v
			}
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "redfish-bridge"}},
			Data:       initial,
		}
		_, err = r.kube.CoreV1().ConfigMaps(r.namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: "redfish-sessions"})
		if apierrors.IsAlreadyExists(err) {
			return r.write(ctx, set, key)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s/%s: %w", r.namespace, r.name, err)
	}
	return nil
}

// remember records a revoke in this replica's memory and drops the
// expired ones.
func (r *ConfigMapRevocations) remember(id string, until, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, t := range r.local {
		if !t.After(now) {
			delete(r.local, k)
		}
	}
	r.local[id] = until
}

// Revoked implements auth.Revocations.
// It answers from the cache once the cache is confirmed current within
// [RevocationLag] (fresh.go).
func (r *ConfigMapRevocations) Revoked(ctx context.Context, id string) (bool, error) {
	r.mu.Lock()
	_, mine := r.local[id]
	r.mu.Unlock()
	if mine {
		return true, nil
	}
	if err := r.fresh(ctx); err != nil {
		return false, err
	}
	cm, err := r.lister.ConfigMaps(r.namespace).Get(r.name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read session revocations: %w", err)
	}
	_, ok := cm.Data[id]
	return ok, nil
}
