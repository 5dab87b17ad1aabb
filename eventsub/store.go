package eventsub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ErrNotFound is a subscription that does not exist.
var ErrNotFound = errors.New("no such event subscription")

// ErrLimit is a create refused by [Limits].
var ErrLimit = errors.New("event subscription limit reached")

// Limits bound the subscriptions the Secret holds, so one user cannot
// fill it (a Secret holds at most 1 MiB) for everybody.
type Limits struct {
	// PerUser is how many subscriptions one user may hold (0: 20).
	PerUser int
	// Total is how many all users together may hold (0: 500).
	Total int
}

func (l Limits) perUser() int { return cmpOr(l.PerUser, 20) }
func (l Limits) total() int   { return cmpOr(l.Total, 500) }

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// keyPrefix starts the data key of a subscription in the Secret.
const keyPrefix = "sub."

// Store keeps subscriptions in the Secret namespace/name.
type Store struct {
	kube            kubernetes.Interface
	namespace, name string
	limits          Limits
	now             func() time.Time

	// cache, when set, answers List and Get (no apiserver request per
	// read); written is the resourceVersion of this store's last write,
	// which a read waits for the cache to have seen (read your writes).
	cache   *Watcher
	written atomic.Uint64
}

// cacheLag bounds how long a read waits for the cache to see this
// store's last write before it reads the Secret itself.
const cacheLag = 2 * time.Second

// ReadFrom makes List and Get answer from w (the watch of the same
// Secret, every replica's), so a read costs no apiserver request.
func (st *Store) ReadFrom(w *Watcher) { st.cache = w }

// NewStore returns a store of the Secret namespace/name (created on the
// first subscription).
func NewStore(kube kubernetes.Interface, namespace, name string, limits Limits) *Store {
	return &Store{kube: kube, namespace: namespace, name: name, limits: limits, now: time.Now}
}

// Create records s for its Owner under a new ID and returns it, or an
// error wrapping [ErrLimit] when the owner or the service is at its cap.
func (st *Store) Create(ctx context.Context, s Subscription) (Subscription, error) {
	id, err := newID()
	if err != nil {
		return Subscription{}, err
	}
	s.ID, s.State, s.Created = id, StateEnabled, st.now().UTC().Truncate(time.Second)
	err = st.update(ctx, func(subs []Subscription) (map[string]*Subscription, error) {
		mine := 0
		for _, o := range subs {
			if o.Owner == s.Owner {
				mine++
			}
		}
		switch {
		case mine >= st.limits.perUser():
			return nil, fmt.Errorf("user %q holds %d subscriptions: %w (at most %d per user)", s.Owner, mine, ErrLimit, st.limits.perUser())
		case len(subs) >= st.limits.total():
			return nil, fmt.Errorf("%d subscriptions held: %w (at most %d in all)", len(subs), ErrLimit, st.limits.total())
		}
		return map[string]*Subscription{id: &s}, nil
	})
	if err != nil {
		return Subscription{}, err
	}
	return s, nil
}

// List returns every subscription, sorted by creation then ID.
func (st *Store) List(ctx context.Context) ([]Subscription, error) {
	if st.cache != nil && st.cacheHas(ctx, st.written.Load()) {
		return slices.Clone(st.cache.Subscriptions()), nil
	}
	sec, err := st.kube.CoreV1().Secrets(st.namespace).Get(ctx, st.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read event subscriptions: %w", err)
	}
	return Decode(sec), nil
}

// cacheHas waits (cacheLag at most) until the cache has seen the Secret
// at resourceVersion rv; false when it has not, or ctx ended.
func (st *Store) cacheHas(ctx context.Context, rv uint64) bool {
	timeout := time.NewTimer(cacheLag)
	defer timeout.Stop()
	for {
		ok, changed := st.cache.seen(rv)
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-timeout.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Get returns subscription id or an error wrapping [ErrNotFound].
func (st *Store) Get(ctx context.Context, id string) (Subscription, error) {
	subs, err := st.List(ctx)
	if err != nil {
		return Subscription{}, err
	}
	for _, s := range subs {
		if s.ID == id {
			return s, nil
		}
	}
	return Subscription{}, fmt.Errorf("event subscription %q: %w", id, ErrNotFound)
}

// Delete removes subscription id (an error wrapping [ErrNotFound] if it
// is not there).
func (st *Store) Delete(ctx context.Context, id string) error {
	return st.update(ctx, func(subs []Subscription) (map[string]*Subscription, error) {
		for _, s := range subs {
			if s.ID == id {
				return map[string]*Subscription{id: nil}, nil
			}
		}
		return nil, fmt.Errorf("event subscription %q: %w", id, ErrNotFound)
	})
}

// SetState records subscription id's State (suspension); a subscription
// deleted meanwhile is not an error.
func (st *Store) SetState(ctx context.Context, id, state string) error {
	err := st.update(ctx, func(subs []Subscription) (map[string]*Subscription, error) {
		for _, s := range subs {
			if s.ID == id {
				s.State = state
				return map[string]*Subscription{id: &s}, nil
			}
		}
		return nil, fmt.Errorf("event subscription %q: %w", id, ErrNotFound)
	})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// update reads the Secret, asks change what to set (nil deletes) and
// writes it guarded by the resourceVersion read, again on a conflict.
func (st *Store) update(ctx context.Context, change func([]Subscription) (map[string]*Subscription, error)) error {
	secrets := st.kube.CoreV1().Secrets(st.namespace)
	for range 8 {
		sec, err := secrets.Get(ctx, st.name, metav1.GetOptions{})
		create := apierrors.IsNotFound(err)
		if create {
			sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: st.namespace, Name: st.name,
				Labels: map[string]string{"app.kubernetes.io/component": "event-subscriptions"}}}
		} else if err != nil {
			return fmt.Errorf("read event subscriptions: %w", err)
		}
		set, err := change(Decode(sec))
		if err != nil {
			return err
		}
		if len(set) == 0 {
			return nil // nothing to change
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		for id, s := range set {
			if s == nil {
				delete(sec.Data, keyPrefix+id)
				continue
			}
			raw, err := json.Marshal(s)
			if err != nil {
				return fmt.Errorf("encode event subscription: %w", err)
			}
			sec.Data[keyPrefix+id] = raw
		}
		var written *corev1.Secret
		if create {
			written, err = secrets.Create(ctx, sec, metav1.CreateOptions{FieldManager: FieldManager})
		} else {
			written, err = secrets.Update(ctx, sec, metav1.UpdateOptions{FieldManager: FieldManager})
		}
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("write event subscriptions: %w", err)
		}
		if rv, perr := strconv.ParseUint(written.ResourceVersion, 10, 64); perr == nil {
			st.wrote(rv)
		}
		return nil
	}
	return fmt.Errorf("write event subscriptions: the Secret kept changing under 8 attempts")
}

// wrote raises written to rv (writes may finish out of order).
func (st *Store) wrote(rv uint64) {
	for {
		old := st.written.Load()
		if rv <= old || st.written.CompareAndSwap(old, rv) {
			return
		}
	}
}

// FieldManager is the manager of the bridge's writes to the Secret.
const FieldManager = "redfish-events"

// Decode returns the subscriptions a Secret holds, sorted by creation
// then ID; an entry that does not decode is skipped.
func Decode(sec *corev1.Secret) []Subscription {
	var out []Subscription
	for k, v := range sec.Data {
		id, ok := strings.CutPrefix(k, keyPrefix)
		if !ok {
			continue
		}
		var s Subscription
		if json.Unmarshal(v, &s) != nil || s.ID != id {
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// newID is a random subscription id: 16 hex digits, URL-safe (Ironic 39
// checks the id it is given).
func newID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("subscription id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
