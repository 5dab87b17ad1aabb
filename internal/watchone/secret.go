package watchone

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Handlers receive the watched object: Set each version of it (the
// first read included), Deleted its deletion.
type Handlers[T any] struct {
	Set     func(obj T)
	Deleted func()
}

// Secret watches the Secret namespace/name until ctx ends and returns
// once its first read was handed to h (a missing Secret: no call).
func Secret(ctx context.Context, kube kubernetes.Interface, namespace, name string, h Handlers[*corev1.Secret]) error {
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	inf := f.Core().V1().Secrets().Informer()
	set := func(obj any) {
		if sec, ok := obj.(*corev1.Secret); ok {
			h.Set(sec)
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(any) { h.Deleted() },
	})
	if err != nil {
		return fmt.Errorf("watch secret %s/%s: %w", namespace, name, err)
	}
	f.Start(ctx.Done())
	// The registration's HasSynced, not the informer's: handlers run on
	// their own goroutine, so the informer's store can hold the Secret
	// before Set has read it.
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return fmt.Errorf("watch secret %s/%s: cache did not sync", namespace, name)
	}
	return nil
}
