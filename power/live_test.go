package power

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// live reads the VM and its VMI from the apiserver.
func (e *env) live(t *testing.T, key system.Key) *apply.VM {
	t.Helper()
	vm, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Get(t.Context(), key.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi, err := e.admin.Resource(kubevirt.VirtualMachineInstances).Namespace(key.Namespace).Get(t.Context(), key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		vmi = nil
	case err != nil:
		// Not "no VMI": a failed read (a loaded apiserver) read so would
		// pass for a guest that went.
		t.Fatal(err)
	}
	return apply.Decode(t.Context(), key, vm, vmi)
}

// eventually polls cond on live reads until it holds (60 s: virt-controller
// and the simulator share a loaded machine with the test; a clean-clone CI
// run beside a 10,000-VM benchmark once took over 30 s for a restart). Its
// failure shows virt-controller's start failure and conditions, which say
// whether the VM was in a start backoff.
func (e *env) eventually(t *testing.T, key system.Key, what string, cond func(vm *apply.VM) bool) *apply.VM {
	t.Helper()
	return e.eventuallyFor(t, key, what, 60*time.Second, cond)
}

// eventuallyFor is eventually with another deadline.
func (e *env) eventuallyFor(t *testing.T, key system.Key, what string, deadline time.Duration, cond func(vm *apply.VM) bool) *apply.VM {
	t.Helper()
	var last *apply.VM
	reached := false
	t.Cleanup(func() {
		if !reached {
			e.logStuck(t, key, last)
		}
	})
	testutil.Eventually(t, what, deadline, 20*time.Millisecond, func(context.Context) error {
		if last = e.live(t, key); !cond(last) {
			startFailure, _, _ := unstructured.NestedFieldNoCopy(last.Object.Object, "status", "startFailure")
			conditions, _, _ := unstructured.NestedFieldNoCopy(last.Object.Object, "status", "conditions")
			return fmt.Errorf("boot %+v power %+v state %s (printableStatus %s, VMI %s, startFailure %v, conditions %v) disks %v", last.Boot, last.Power, State(last),
				kubevirt.PrintableStatusOf(last.Object), kubevirt.PhaseOf(last.VMI), startFailure, conditions, bootOrders(last))
		}
		return nil
	})
	reached = true
	return last
}

// logStuck logs, for a wait that was not reached, the last VMI read (its
// finalizers and status show whether virt-controller ever processed it)
// and the namespace's pods.
func (e *env) logStuck(t *testing.T, key system.Key, last *apply.VM) {
	if last != nil && last.VMI != nil {
		vmi := last.VMI
		st, _, _ := unstructured.NestedMap(vmi.Object, "status")
		t.Logf("last VMI read: uid %s finalizers %v deletionTimestamp %v status %v", vmi.GetUID(), vmi.GetFinalizers(), vmi.GetDeletionTimestamp(), st)
	}
	pods, err := e.kube.CoreV1().Pods(key.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Logf("pods of %s: %v", key.Namespace, err)
		return
	}
	for _, p := range pods.Items {
		t.Logf("pod %s: uid %s owners %v deletionTimestamp %v phase %s", p.Name, p.UID, p.OwnerReferences, p.DeletionTimestamp, p.Status.Phase)
	}
}
