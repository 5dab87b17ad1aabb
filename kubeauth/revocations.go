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
// once: an entry is ~62 bytes and its user's name (a 32-character session
// id, an RFC 3339 time), so 10000 of users with short names stay under
// the apiserver's 1 MiB limit on a ConfigMap (a write past that limit
// fails cleanly: [ConfigMapRevocations.Revoke]). Entries leave when their
// token expires (30 minutes by default), so the bound is ~5 logouts per
// second sustained.
const MaxRevocations = 10000

// MaxRecordsPerUser bounds the entries of one user (open sessions, and
// ended ones until their tokens expire): a user's login finding that many
// fails (auth.ErrSessionLimit) and leaves the rest of the [MaxRevocations]
// to others, so 50 users are needed to fill the ConfigMap. A logout
// replaces its session's open entry and never adds one.
const MaxRecordsPerUser = 200

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
	// max is [MaxRevocations] and maxPerUser [MaxRecordsPerUser]
	// outside tests.
	max, maxPerUser int

	// lag is [RevocationLag] outside tests (fresh.go).
	lag time.Duration

	// confirmMu serialises confirmations of the cache (fresh.go).
	confirmMu sync.Mutex

	mu     sync.Mutex
	local  map[string]auth.Session // this replica's revokes, until their tokens expire
	opened map[string]auth.Session // this replica's logins, until they expire
	ended  map[string]struct{}     // sessions found ended (activity.go)
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
		max: MaxRevocations, maxPerUser: MaxRecordsPerUser, lag: lag, local: map[string]auth.Session{}, opened: map[string]auth.Session{}, changed: make(chan struct{})}
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

// Revoke implements auth.Revocations: the ended session's entry (its
// token's expiry and its user) replaces its open record, in one patch, so
// a logout never adds to its user's records and is never refused for
// their number. It returns once every replica refuses the session's token
// (after [RevocationLag], fresh.go); a revocation the ConfigMap refuses is
// an error and changes nothing, here or elsewhere, so the client can
// retry with the same token.
func (r *ConfigMapRevocations) Revoke(ctx context.Context, id, user string, until time.Time) error {
	s := auth.Session{ID: id, User: user, Expires: until}
	err := r.write(ctx, map[string]any{s.ID: entryValue(s), openKey(s.ID): nil}, s.User)
	if err != nil {
		return fmt.Errorf("revoke session (not ended anywhere): %w", err)
	}
	r.remember(s, r.now())
	return r.settle(ctx)
}

// write merge-patches set into the ConfigMap (creating it), with a null
// for every expired entry. An entry set adds (a value for a key not yet
// recorded, net of the recorded keys set removes) counts against the
// ConfigMap's bound ([ErrRevocationsFull]) and, for user, against the
// per-user bound (auth.ErrSessionLimit): every entry names its user.
func (r *ConfigMapRevocations) write(ctx context.Context, set map[string]any, user string) error {
	now := r.now()
	data := map[string]any{}
	recorded := map[string]string{} // the unexpired entries
	if cm, err := r.lister.ConfigMaps(r.namespace).Get(r.name); err == nil {
		for k, v := range cm.Data {
			t, err := entryExpiry(v)
			if err != nil || !t.After(now) {
				data[k] = nil
			} else {
				recorded[k] = v
			}
		}
	}
	r.addOwnWrites(recorded, now)
	mine := 0
	for _, v := range recorded {
		if entryUser(v) == user {
			mine++
		}
	}
	added := 0 // net of the entries set removes (all of them user's)
	for k, v := range set {
		_, was := recorded[k]
		switch {
		case v != nil && !was:
			added++
		case v == nil && was:
			added--
		}
	}
	if added > 0 {
		if live := len(recorded); live+added > r.max {
			return fmt.Errorf("%s/%s: %w: %d unexpired sessions recorded, at most %d", r.namespace, r.name, ErrRevocationsFull, live, r.max)
		}
		if r.maxPerUser > 0 && mine+added > r.maxPerUser {
			return fmt.Errorf("%s/%s: %w: %q has %d sessions recorded (open, or ended until their tokens expire), at most %d per user",
				r.namespace, r.name, auth.ErrSessionLimit, user, mine, r.maxPerUser)
		}
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
			return r.write(ctx, set, user)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s/%s: %w", r.namespace, r.name, err)
	}
	return nil
}

// addOwnWrites adds to recorded (key -> value of the unexpired entries)
// this replica's own logins and logouts that its cache may not show yet,
// so that a burst of them is counted exactly.
func (r *ConfigMapRevocations) addOwnWrites(recorded map[string]string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, s := range r.local {
		if s.Expires.After(now) {
			recorded[id] = entryValue(s)
			delete(recorded, openKey(id))
		}
	}
	for id, s := range r.opened {
		if _, revoked := r.local[id]; !revoked && s.Expires.After(now) {
			if _, ok := recorded[openKey(id)]; !ok {
				recorded[openKey(id)] = entryValue(s)
			}
		}
	}
}

// remember records a revoke in this replica's memory and drops the
// expired ones.
func (r *ConfigMapRevocations) remember(s auth.Session, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, o := range r.local {
		if !o.Expires.After(now) {
			delete(r.local, k)
		}
	}
	r.local[s.ID] = s
	delete(r.opened, s.ID)
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
