package power

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// testOnWhileStopping (TestForce, both CRD variants, with virt-api): an On
// while the hung guest's GracefulShutdown is under way is refused with a
// ResetConflictError (409 ActionParameterValueConflict) and changes
// nothing; after a ForceOff the On (retried as Ironic 39 retries it) is
// accepted, and every read from then until the new VMI runs shows
// PoweringOn or On, never Off.
func testOnWhileStopping(t *testing.T, e *env) {
	ctx := t.Context()
	key, on := hungGuestOn(t, e, "onwhilestopping")
	if err := e.s.Reset(ctx, key, system.ResetGracefulShutdown); err != nil {
		t.Fatal(err)
	}
	e.stopHeld(t, key, on.VMI.GetUID(), "GracefulShutdown")
	// The Reset decides on the bridge's reads: wait until they show the
	// power-off written.
	testutil.Eventually(t, "the bridge's reads show the graceful stop", 60*time.Second, 20*time.Millisecond, func(ctx context.Context) error {
		vm, err := e.w.Read(ctx, key)
		if err != nil {
			return err
		}
		if !stopping(vm) {
			return fmt.Errorf("runStrategy %s, %s", runStrategy(vm), describeVMI(vm))
		}
		return nil
	})
	err := e.s.Reset(ctx, key, system.ResetOn)
	if c, ok := errors.AsType[*ResetConflictError](err); !ok || c.ResetType != system.ResetOn {
		t.Fatalf("On during the graceful shutdown: %v, want a ResetConflictError on On", err)
	}
	if vm := e.live(t, key); runStrategy(vm) != runOff || len(kubevirt.StateChangeRequestsOf(vm.Object)) != 0 {
		t.Errorf("the refused On wrote: runStrategy %s, requests %v", runStrategy(vm), kubevirt.StateChangeRequestsOf(vm.Object))
	}

	if err := e.s.Reset(ctx, key, system.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	e.forced(t, key, on.VMI.GetUID(), "ForceOff during the graceful shutdown")
	if err := onRetried(ctx, e.s, key); err != nil {
		t.Fatalf("On after ForceOff: %v", err)
	}
	e.eventuallyFor(t, key, "on again with a new VMI", forceDeadline, func(vm *apply.VM) bool {
		if st := State(vm); st != system.PowerPoweringOn && st != system.PowerOn {
			t.Fatalf("after the accepted On: PowerState %s (%s, requests %v), want PoweringOn until the VM runs", st, describeVMI(vm), kubevirt.StateChangeRequestsOf(vm.Object))
		}
		return onWithNewVMI(vm, on)
	})
}
