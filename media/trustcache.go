package media

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/internal/objmac"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// TrustCache is the informer cache of the slots' trust ConfigMaps: only
// those carrying the labels the bridge gives them (component media-tls,
// part-of redfish-bridge) are listed and watched, so a GET of a slot, its
// Certificates or one certificate reads no apiserver, and a ConfigMap
// someone else made without those labels is never even seen. Labels are
// no proof, so the cache holds the data only of a ConfigMap whose MAC
// verifies (trustmac.go: the bridge wrote it, at most [MaxTrustBytes] of
// certificates); of any other it holds the identity alone (~0.3 KiB,
// whatever its size). Ownership (the VM's UID) and the MAC are checked
// again on every read ([Service.Trust]).
type TrustCache struct {
	// informers by namespace ("" when cluster-wide).
	informers map[string]cache.SharedIndexInformer

	mu sync.Mutex
	// changed is closed (and replaced) when any informer's handler sees a
	// ConfigMap added, updated or deleted: what [TrustCache.await] waits on.
	changed chan struct{}
}

// trustSelector selects the ConfigMaps [Service.editTrust] creates.
func trustSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelComponent: ComponentTrust, LabelPartOf: PartOf})
}

// StartTrustCache starts the trust ConfigMap informers of namespaces (all
// when empty) and waits until they have synced or ctx ends. They stop
// when ctx ends. secret is the bridge's object secret
// ([Service.SetObjectSecret]): without it no ConfigMap's data is held.
func StartTrustCache(ctx context.Context, kube kubernetes.Interface, namespaces []string, secret []byte) (*TrustCache, error) {
	key := trustKey(secret)
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	c := &TrustCache{informers: make(map[string]cache.SharedIndexInformer, len(namespaces)), changed: make(chan struct{})}
	notify := func(any) { c.notify() }
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	}
	var synced []cache.InformerSynced
	for _, ns := range namespaces {
		if _, dup := c.informers[ns]; dup {
			continue
		}
		f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = trustSelector().String() }))
		inf := f.Core().V1().ConfigMaps().Informer()
		if err := inf.SetTransform(func(obj any) (any, error) { return trimTrust(key, obj), nil }); err != nil {
			return nil, fmt.Errorf("trust cache: %w", err)
		}
		reg, err := inf.AddEventHandler(handler)
		if err != nil {
			return nil, fmt.Errorf("trust cache: %w", err)
		}
		c.informers[ns] = inf
		f.Start(ctx.Done())
		synced = append(synced, inf.HasSynced, reg.HasSynced)
	}
	start := time.Now()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil, fmt.Errorf("trust cache of namespaces %q did not sync: %w", namespaces, context.Cause(ctx))
	}
	logctx.From(ctx).Info("trust cache synced", "namespaces", namespaces, "took", time.Since(start))
	return c, nil
}

// notify wakes the waiters of [TrustCache.await]: the informer's indexer
// already holds the change when its handlers run.
func (c *TrustCache) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.changed)
	c.changed = make(chan struct{})
}

// next is what the next change closes.
func (c *TrustCache) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// trimTrust is what the cache holds of a trust ConfigMap: its identity,
// the labels and owner reference [Service.Trust] checks and, when its MAC
// verifies under k for the VM that reference names, its data and MAC.
// Nothing else (managedFields, other labels, annotations and owner
// references: whatever their size) is held.
func trimTrust(k objmac.Key, obj any) any {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return obj // a DeletedFinalStateUnknown: the indexer drops it
	}
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: cm.Name, Namespace: cm.Namespace, UID: cm.UID, ResourceVersion: cm.ResourceVersion,
		Labels: map[string]string{LabelComponent: cm.Labels[LabelComponent], LabelPartOf: cm.Labels[LabelPartOf]},
	}}
	for _, r := range cm.OwnerReferences {
		if r.Kind == kubevirt.Kind && trustSigned(k, cm, r.UID) {
			kept.OwnerReferences = []metav1.OwnerReference{r}
			kept.Annotations = map[string]string{objmac.Annotation: cm.Annotations[objmac.Annotation]}
			kept.Data = cm.Data
			break
		}
	}
	return kept
}

// get returns the cached ConfigMap namespace/name, nil when there is none.
// It is shared with the cache: do not modify it.
func (c *TrustCache) get(namespace, name string) (*corev1.ConfigMap, error) {
	inf, ok := c.informers[namespace]
	if !ok {
		inf = c.informers[metav1.NamespaceAll]
	}
	if inf == nil {
		return nil, nil
	}
	obj, ok, err := inf.GetIndexer().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, err
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil, fmt.Errorf("trust cache: %s/%s: unexpected type %T", namespace, name, obj)
	}
	return cm, nil
}

// trustCacheWait bounds how long a trust write waits for the cache to
// show it; the watch normally delivers within milliseconds.
var trustCacheWait = 2 * time.Second

// await waits (bounded) until the cache holds namespace/name at
// resourceVersion rv or later, so the client's next GET reads its own
// write back. It looks again only when the informers' handlers report a
// change, never on a timer.
func (c *TrustCache) await(ctx context.Context, namespace, name, rv string) {
	want, err := strconv.ParseUint(rv, 10, 64)
	deadline := time.NewTimer(trustCacheWait)
	defer deadline.Stop()
	for {
		changed := c.next() // before the read: a change after it wakes us
		cm, _ := c.get(namespace, name)
		if cm != nil {
			if cm.ResourceVersion == rv {
				return
			}
			if got, err2 := strconv.ParseUint(cm.ResourceVersion, 10, 64); err == nil && err2 == nil && got >= want {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-changed:
		}
	}
}
