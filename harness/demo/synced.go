package demo

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
)

// syncTimeout bounds [WaitSynced]: virt-controller syncs a new VM within a
// second on an idle machine, within seconds on a loaded one.
const syncTimeout = 2 * time.Minute

// Synced reports whether virt-controller has synced vm: it wrote the VM
// itself (its first sync PUTs the typed VM back: api-version annotations,
// finalizer, domain.resources {}, template metadata {}) and its status
// (printableStatus). Before that, those writes may land between a
// client's two reads of the VM.
func Synced(vm *unstructured.Unstructured) bool {
	if kubevirt.PrintableStatusOf(vm) == "" {
		return false
	}
	return slices.ContainsFunc(vm.GetManagedFields(), func(mf metav1.ManagedFieldsEntry) bool {
		return mf.Manager == kubevirt.ControllerFieldManager && mf.Subresource == ""
	})
}

// WaitSynced waits until virt-controller has synced ([Synced]) every VM of
// namespace named in names.
func WaitSynced(ctx context.Context, dyn dynamic.Interface, namespace string, names ...string) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for {
		list, err := dyn.Resource(kubevirt.VirtualMachines).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("wait for virt-controller to sync the VMs of %s: %w", namespace, err)
		}
		synced := map[string]bool{}
		for i := range list.Items {
			synced[list.Items[i].GetName()] = Synced(&list.Items[i])
		}
		var waiting []string
		for _, n := range names {
			if !synced[n] {
				waiting = append(waiting, n)
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("virt-controller has not synced VMs %v of %s: %w", waiting, namespace, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
