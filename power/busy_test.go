package power

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// frozenLayout is a Writer whose Relayout writes nothing: a boot order
// that differs from the recorded override stays that way, as when other
// writers keep changing it under a power-on.
type frozenLayout struct{ Writer }

func (frozenLayout) Relayout(context.Context, system.Key) (*apply.VM, error) { return nil, nil }

// TestOnWhileBootOrderUnsettled: a power-on that cannot settle the boot
// order is refused with ErrBusy (the bridge answers 409, which the client
// retries), not with an unclassified error (500); it starts nothing. No
// Reconciler runs (it would settle the order behind the test's back). The
// real Writer's Relayout, on the same VM, settles it and powers on.
func TestOnWhileBootOrderUnsettled(t *testing.T) {
	eachVariant(t, func(t *testing.T, _ crds.Variant, c *testcluster.Cluster) {
		e := startEnvWith(t, c, envOptions{noReconciler: true})
		ctx := t.Context()
		key := e.createVM(t, "unsettled")
		e.setSlot(t, key, ready)
		if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Target: ptrTo(system.BootCd), Enabled: ptrTo(system.BootOnce)}); err != nil {
			t.Fatal(err)
		}
		// An outside writer puts the root disk first (kubectl edit).
		patch := `{"spec":{"template":{"spec":{"domain":{"devices":{"disks":[` +
			`{"name":"rootdisk","disk":{"bus":"virtio"},"bootOrder":1},` +
			`{"name":"` + apply.DiskName("cd0") + `","cdrom":{"bus":"sata","readonly":true},"bootOrder":2}]}}}}}}`
		if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		// Wait until the Writer's reads (the cache) show it too.
		testutil.Eventually(t, "the Writer reads the boot order unsettled", 60*time.Second, 20*time.Millisecond, func(ctx context.Context) error {
			vm, err := e.w.Read(ctx, key)
			switch {
			case err != nil:
				return err
			case apply.Settled(vm):
				return errors.New("still settled")
			}
			return nil
		})

		err := New(frozenLayout{e.w}, e.admin, nil).Reset(ctx, key, system.ResetOn)
		if !errors.Is(err, ErrBusy) {
			t.Fatalf("On with a boot order that never settles: %v, want an error wrapping ErrBusy", err)
		}
		if vm := e.live(t, key); runStrategy(vm) != "Halted" || vm.VMI != nil {
			t.Errorf("refused On changed the VM: runStrategy %s, VMI %v", runStrategy(vm), vm.VMI != nil)
		}

		if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
			t.Fatalf("On through the real Writer: %v", err)
		}
		vm := e.eventually(t, key, "on with the CD-ROM first", func(vm *apply.VM) bool { return State(vm) == system.PowerOn })
		if got := ordersOf(vm.VMI, "spec", "domain", "devices", "disks")[apply.DiskName("cd0")]; got != 1 {
			t.Errorf("VMI boots the CD-ROM at %d, want 1", got)
		}
	})
}
