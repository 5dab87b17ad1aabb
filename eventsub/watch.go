package eventsub

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
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
		rv, _ := strconv.ParseUint(sec.ResourceVersion, 10, 64)
		w.set(Decode(sec), rv)
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(any) { w.set(nil, 0) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch event subscriptions: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return nil, fmt.Errorf("watch event subscriptions %s/%s: cache did not sync", namespace, name)
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
