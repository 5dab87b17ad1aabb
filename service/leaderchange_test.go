package service_test

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/service"
)

// testLeaderChange runs in testEvents once the leader b delivered to
// rc's subscription: another holder takes the Lease (as after a
// partition), so b stops leading and nobody leads; a VM is created then
// (c's bus publishes it, nobody delivers it); b stops, the holder lets
// go, and c, leading, must deliver that creation before the VM's removal
// it sees live: its delivery replays from its history the events after
// the last one b recorded as delivered. The duplicates the change costs
// are logged.
func testLeaderChange(t *testing.T, e *env, b, c *bridge, rc *receiver, subC *event.Subscription, seen map[*event.Subscription][]event.Event) {
	ctx := t.Context()
	leases := kubernetes.NewForConfigOrDie(e.c.Admin).CoordinationV1().Leases(e.c.BridgeNamespace)
	holder, seconds := "intruder", int32(3600)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // b renews every 200 ms
		lease, err := leases.Get(ctx, service.DefaultLeaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.NewMicroTime(time.Now())
		lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now}
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replica b to stop leading", func() bool { return !b.Leading() })

	vms := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns)
	if _, err := vms.Create(ctx, demo.SampleVM(e.ns, "vm-unled"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	unled := "/redfish/v1/Systems/" + e.ns + ".vm-unled"
	created := awaitEvent(t, subC, seen, "a VM created while nobody leads", "ResourceEvent.1.3.0.ResourceCreated", unled)
	if b.Leading() || c.Leading() {
		t.Fatalf("leading when the VM was created: b=%v c=%v, want nobody", b.Leading(), c.Leading())
	}
	b.stop() // its term ended: it recorded how far it delivered
	if err := leases.Delete(ctx, service.DefaultLeaseName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replica c to lead", c.Leading)
	tookOver := time.Now()
	if err := vms.Delete(ctx, "vm-unled", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	removed := awaitEvent(t, subC, seen, "the VM removed under c", "ResourceEvent.1.3.0.ResourceRemoved", unled)

	// The receiver: the creation nobody delivered, before the removal.
	bound, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	var got []string
	for {
		select {
		case ev := <-rc.got:
			got = append(got, ev.msg+" "+ev.origin)
			if ev.id == created.ID {
				t.Logf("the creation published while nobody led delivered %s after c took the Lease", time.Since(tookOver).Round(time.Millisecond))
			}
			if ev.id != removed.ID {
				continue
			}
			if rc.count(created.ID) == 0 {
				t.Errorf("the VM's creation (%s), published while nobody led, was not delivered before its removal under the new leader; delivered:\n%v", created.ID, got)
			}
			t.Logf("duplicates the receiver got (the leader change's at-least-once): %d: %v", len(rc.duplicates()), rc.duplicates())
			return
		case <-bound.Done():
			t.Fatalf("the VM's removal under the new leader: not delivered within %s; delivered:\n%v", waitTimeout, got)
		}
	}
}
