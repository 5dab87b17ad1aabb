package kubeauth

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"
)

// A logout answered 2xx on one replica must be refused on every replica at
// once, not when its watch event arrives. Each replica therefore accepts a
// token only while its cache is known to be at most [RevocationLag] behind
// the apiserver: it confirms that by a quorum read of the ConfigMap's
// resourceVersion (its metadata only) and waiting for its cache to reach
// it, in the background every half lag and, when the last confirmation is
// older than the lag, before answering. A logout waits the lag after its
// write before answering: any token check that starts after the answer
// then reads a cache confirmed after the write. With the apiserver
// unreachable for longer than the lag, token checks fail (503), because
// the replica cannot know whether the token was revoked; Basic auth does
// not depend on it.

// RevocationLag bounds how stale a replica's view of the revocations may be
// when it accepts a token; a logout answers this long after its write.
const RevocationLag = time.Second

// confirmTimeout bounds a confirmation: the read, then the wait for the
// cache to catch up with it.
const confirmTimeout = 5 * time.Second

// fresh returns once the cache is confirmed within the lag, confirming it
// now if needed.
func (r *ConfigMapRevocations) fresh(ctx context.Context) error {
	return r.confirmOlderThan(ctx, r.lag)
}

// confirmOlderThan confirms the cache unless a confirmation newer than age
// exists. Callers share one confirmation: the ones waiting on the lock find
// the confirmation made meanwhile.
func (r *ConfigMapRevocations) confirmOlderThan(ctx context.Context, age time.Duration) error {
	return r.confirmAfter(ctx, time.Now().Add(-age))
}

// confirmAfter confirms the cache unless a confirmation sent at or after
// since exists.
func (r *ConfigMapRevocations) confirmAfter(ctx context.Context, since time.Time) error {
	if !r.confirmedAt().Before(since) {
		return nil
	}
	r.confirmMu.Lock()
	defer r.confirmMu.Unlock()
	if !r.confirmedAt().Before(since) {
		return nil
	}
	wait, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	sent := time.Now()
	live, err := r.liveVersion(wait)
	if err != nil {
		return fmt.Errorf("confirm the session revocations are current: %w", err)
	}
	if err := r.awaitCache(wait, live); err != nil {
		return err
	}
	r.mu.Lock()
	r.confirmed = sent
	r.mu.Unlock()
	return nil
}

// awaitCache returns once the cache holds version live of the ConfigMap
// or a later one, or ctx ends. It reads the cache again only when the
// informer reports a change (no polling): the channel is taken before the
// read, so a change between the read and the wait is not missed.
func (r *ConfigMapRevocations) awaitCache(ctx context.Context, live string) error {
	for {
		changed := r.nextChange()
		if r.cacheReached(live) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the session revocations cache did not reach resourceVersion %q: %w", live, ctx.Err())
		case <-changed:
		}
	}
}

// nextChange returns a channel closed at the cache's next change of the
// ConfigMap.
func (r *ConfigMapRevocations) nextChange() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// notifyChange wakes the waiters of [ConfigMapRevocations.nextChange]. It
// is the informer's handler: it runs after the cache took the change.
func (r *ConfigMapRevocations) notifyChange() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.changed)
	r.changed = make(chan struct{})
}

// changeHandler feeds notifyChange from the informer.
func (r *ConfigMapRevocations) changeHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { r.notifyChange() },
		UpdateFunc: func(_, _ any) { r.notifyChange() },
		DeleteFunc: func(any) { r.notifyChange() },
	}
}

func (r *ConfigMapRevocations) confirmedAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.confirmed
}

// liveVersion reads the ConfigMap's resourceVersion from etcd (a list
// without resourceVersion is a quorum read), its metadata only: the
// ConfigMap may hold up to ~1 MB of entries. It lists by name, as the
// informer does, which the bridge's Role allows (it has no get). ""
// means the ConfigMap does not exist.
func (r *ConfigMapRevocations) liveVersion(ctx context.Context) (string, error) {
	raw, err := r.kube.CoreV1().RESTClient().Get().Namespace(r.namespace).Resource("configmaps").
		Param("fieldSelector", fields.OneTermEqualSelector("metadata.name", r.name).String()).
		SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("read %s/%s: %w", r.namespace, r.name, err)
	}
	var l metav1.PartialObjectMetadataList
	if err := json.Unmarshal(raw, &l); err != nil {
		return "", fmt.Errorf("decode %s/%s metadata: %w", r.namespace, r.name, err)
	}
	if len(l.Items) == 0 {
		return "", nil
	}
	return l.Items[0].ResourceVersion, nil
}

// cacheReached reports whether the cache holds version live of the
// ConfigMap or a later one ("" : none exists).
func (r *ConfigMapRevocations) cacheReached(live string) bool {
	cm, err := r.lister.ConfigMaps(r.namespace).Get(r.name)
	if err != nil {
		return live == "" && apierrors.IsNotFound(err)
	}
	if live == "" || cm.ResourceVersion == live {
		return true // deleted since the cache's version: nothing more to learn
	}
	// resourceVersions are etcd revisions: compare them as numbers when
	// they are, else only equality counts.
	have, err1 := strconv.ParseUint(cm.ResourceVersion, 10, 64)
	want, err2 := strconv.ParseUint(live, 10, 64)
	return err1 == nil && err2 == nil && have >= want
}

// keepFresh confirms the cache every half lag until ctx ends, so token
// checks rarely wait for a confirmation.
func (r *ConfigMapRevocations) keepFresh(ctx context.Context) {
	t := time.NewTicker(r.lag / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = r.confirmOlderThan(ctx, r.lag/2) // a failure shows in token checks
		}
	}
}

// settle waits the lag after a revocation was written, so that every
// replica's cache is confirmed after it before the logout is answered.
func (r *ConfigMapRevocations) settle(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("wait for every replica to see the revocation: %w", ctx.Err())
	case <-time.After(r.lag + r.lag/10):
		return nil
	}
}
