package eventsub

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/internal/watchone"
)

// Watcher holds the subscriptions of the watched Secret, decoded once per
// change of it.
type Watcher struct {
	mu      sync.RWMutex
	subs    []Subscription
	rv      uint64        // the resourceVersion of the Secret last decoded (0: none, or not a number)
	changed chan struct{} // closed and replaced at each change
}

// Watch watches the Secret namespace/name until ctx ends and returns once
// it was read (a missing Secret holds no subscriptions).
func Watch(ctx context.Context, kube kubernetes.Interface, namespace, name string) (*Watcher, error) {
	w := &Watcher{changed: make(chan struct{})}
	err := watchone.Secret(ctx, kube, namespace, name, watchone.Handlers[*corev1.Secret]{
		Set: func(sec *corev1.Secret) {
			rv, _ := strconv.ParseUint(sec.ResourceVersion, 10, 64)
			w.set(Decode(sec), rv)
		},
		Deleted: func() { w.set(nil, 0) },
	})
	if err != nil {
		return nil, fmt.Errorf("event subscriptions: %w", err)
	}
	return w, nil
}

func (w *Watcher) set(subs []Subscription, rv uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs, w.rv = subs, rv
	close(w.changed)
	w.changed = make(chan struct{})
}

// Subscriptions returns the subscriptions last read (shared: do not
// modify).
func (w *Watcher) Subscriptions() []Subscription {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.subs
}

// Changed is closed at the next change of the subscriptions.
func (w *Watcher) Changed() <-chan struct{} {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.changed
}

// seen reports whether the watch has decoded the Secret at resourceVersion
// rv or later, and the channel closed at its next change.
func (w *Watcher) seen(rv uint64) (bool, <-chan struct{}) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.rv >= rv, w.changed
}
