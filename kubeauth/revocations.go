package kubeauth

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listerscorev1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// ConfigMapRevocations implements auth.Revocations with one ConfigMap whose
// keys are ended session ids and whose values are RFC 3339 expiry times.
//
// A revoke is a JSON merge patch of a single key: a merge patch on a map
// touches only the keys it names, so concurrent revokes from several
// replicas never overwrite each other (unlike a list, a map needs no
// ownership bookkeeping here). Expired keys are removed with the next
// revoke (a null in a merge patch deletes the key).
type ConfigMapRevocations struct {
	kube            kubernetes.Interface
	namespace, name string
	lister          listerscorev1.ConfigMapLister
	now             func() time.Time

	mu    sync.Mutex
	local map[string]time.Time // read-your-writes before the watch catches up
}

// WatchConfigMapRevocations watches namespace/name (created on first revoke).
func WatchConfigMapRevocations(ctx context.Context, kube kubernetes.Interface, namespace, name string) (*ConfigMapRevocations, error) {
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	inf := f.Core().V1().ConfigMaps()
	r := &ConfigMapRevocations{kube: kube, namespace: namespace, name: name, lister: inf.Lister(), now: time.Now, local: map[string]time.Time{}}
	informer := inf.Informer()
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil, fmt.Errorf("watch session revocations %s/%s: cache did not sync", namespace, name)
	}
	return r, nil
}

// Revoke implements auth.Revocations.
func (r *ConfigMapRevocations) Revoke(ctx context.Context, id string, until time.Time) error {
	now := r.now()
	data := map[string]any{id: until.UTC().Format(time.RFC3339)}
	if cm, err := r.lister.ConfigMaps(r.namespace).Get(r.name); err == nil {
		for k, v := range cm.Data {
			if t, err := time.Parse(time.RFC3339, v); err != nil || t.Before(now) {
				data[k] = nil
			}
		}
	}
	patch, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	_, err = r.kube.CoreV1().ConfigMaps(r.namespace).Patch(ctx, r.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "redfish-sessions"})
	if apierrors.IsNotFound(err) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "redfish-bridge"}},
			Data:       map[string]string{id: until.UTC().Format(time.RFC3339)},
		}
		_, err = r.kube.CoreV1().ConfigMaps(r.namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: "redfish-sessions"})
		if apierrors.IsAlreadyExists(err) {
			return r.Revoke(ctx, id, until)
		}
	}
	if err != nil {
		return fmt.Errorf("revoke session in %s/%s: %w", r.namespace, r.name, err)
	}
	r.mu.Lock()
	r.local[id] = until
	r.mu.Unlock()
	return nil
}

// Revoked implements auth.Revocations.
func (r *ConfigMapRevocations) Revoked(_ context.Context, id string) (bool, error) {
	r.mu.Lock()
	_, mine := r.local[id]
	r.mu.Unlock()
	if mine {
		return true, nil
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
