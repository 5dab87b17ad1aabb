package bench

import (
	"cmp"
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// vmWatch follows the printable status virt-controller writes on every VM
// (an informer over all VMs, each cut down to its key and that status), so
// the setup can wait for virt-controller without listing 10,000 VMs a
// second.
type vmWatch struct {
	informer cache.SharedIndexInformer
	stop     context.CancelFunc
}

func watchVMs(ctx context.Context, dyn dynamic.Interface) (*vmWatch, error) {
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, kubevirt.VirtualMachines, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	if err := inf.SetTransform(func(obj any) (any, error) {
		vm, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // a tombstone
		}
		cut := &unstructured.Unstructured{Object: map[string]any{}}
		cut.SetNamespace(vm.GetNamespace())
		cut.SetName(vm.GetName())
		cut.SetResourceVersion(vm.GetResourceVersion())
		if s := kubevirt.PrintableStatusOf(vm); s != "" {
			if err := unstructured.SetNestedField(cut.Object, string(s), kubevirt.PrintableStatus...); err != nil {
				return nil, fmt.Errorf("trim VM %s/%s: %w", vm.GetNamespace(), vm.GetName(), err)
			}
		}
		return cut, nil
	}); err != nil {
		return nil, fmt.Errorf("VM watch transform: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		cancel()
		return nil, fmt.Errorf("VM watch: cache not synced: %w", context.Cause(ctx))
	}
	return &vmWatch{informer: inf, stop: cancel}, nil
}

// count is how many of keys have printable status want ("" = any).
func (w *vmWatch) count(keys []system.Key, want kubevirt.Status) int {
	n := 0
	for _, k := range keys {
		obj, ok, err := w.informer.GetStore().GetByKey(k.Namespace + "/" + k.Name)
		if err != nil || !ok {
			continue
		}
		s := kubevirt.PrintableStatusOf(obj.(*unstructured.Unstructured))
		if want == "" && s != "" || want != "" && s == want {
			n++
		}
	}
	return n
}

// wait polls every second until count(keys, want) reaches len(keys) or ctx
// ends; it returns the last count and, when short, ctx's error.
func (w *vmWatch) wait(ctx context.Context, keys []system.Key, want kubevirt.Status) (int, error) {
	for {
		n := w.count(keys, want)
		if n >= len(keys) {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return n, fmt.Errorf("%d of %d VMs with printableStatus %q: %w", n, len(keys), cmp.Or(string(want), "set"), ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
