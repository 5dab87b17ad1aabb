package power

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// oneRead is a Writer over one VM read that records what a power-on
// would write and writes nothing.
type oneRead struct {
	Writer
	vm     *apply.VM
	powers []apply.PowerChange
	reqs   []kubevirt.StateChangeRequest
}

func (w *oneRead) Read(context.Context, system.Key) (*apply.VM, error)     { return w.vm, nil }
func (w *oneRead) Relayout(context.Context, system.Key) (*apply.VM, error) { return w.vm, nil }

func (w *oneRead) Power(_ context.Context, _ system.Key, change apply.PowerChangeFunc) (*apply.VM, error) {
	var p apply.PowerChange
	if err := change(w.vm, &p); errors.Is(err, apply.ErrNoChange) {
		return w.vm, nil
	} else if err != nil {
		return nil, err
	}
	w.powers = append(w.powers, p)
	return w.vm, nil
}

func (w *oneRead) StateChange(_ context.Context, _ system.Key, change apply.StateChangeFunc) (*apply.VM, error) {
	reqs := kubevirt.StateChangeRequestsOf(w.vm.Object)
	if err := change(w.vm, &reqs); errors.Is(err, apply.ErrNoChange) {
		return w.vm, nil
	} else if err != nil {
		return nil, err
	}
	w.reqs = reqs
	return w.vm, nil
}

// graced sets vmi's terminationGracePeriodSeconds.
func graced(vmi *unstructured.Unstructured, seconds int64) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(vmi.Object, seconds, kubevirt.VMIGracePeriod...)
	return vmi
}

// TestResetWhileStopping: a power-on (On, ForceOn, a restart or
// PushPowerButton of a VM that is not on) while the VM is still stopping
// gracefully (runStrategy Halted, its VMI not ended, its grace period not
// cut by a forced stop) is refused with a
// ResetConflictError naming the ResetType (409 ActionParameterValueConflict,
// which Ironic 39 retries a power-on on) and writes nothing; once the VMI
// has ended, or a ForceOff cut its grace period, the same On is accepted. Unit test over one read: the
// apiserver scenario is TestOnWhileStopping.
func TestResetWhileStopping(t *testing.T) {
	vm := func(runStrategy kubevirt.RunStrategyValue, vmi *unstructured.Unstructured) *apply.VM {
		return &apply.VM{
			Key:    system.Key{Namespace: "ns1", Name: "vm1"},
			Object: &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"runStrategy": string(runStrategy)}}},
			VMI:    vmi,
		}
	}
	for _, kind := range []system.ResetType{system.ResetOn, system.ResetForceOn, system.ResetGracefulRestart, system.ResetForceRestart, system.ResetPushPowerButton} {
		for _, tc := range []struct {
			name     string
			vm       *apply.VM
			conflict bool
		}{
			{"stopping: Halted, VMI being deleted", vm(runOff, vmi(kubevirt.PhaseRunning, true)), true},
			{"stopping: Halted, VMI being deleted within its grace", vm(runOff, graced(vmi(kubevirt.PhaseRunning, true), 30)), true},
			{"stopping: Halted, VMI not yet deleted", vm(runOff, vmi(kubevirt.PhaseScheduled, false)), true},
			{"forced stop: Halted, VMI being deleted at grace 0 (ForceOff)", vm(runOff, graced(vmi(kubevirt.PhaseRunning, true), 0)), false},
			{"forced stop: grace 1 (virt-api's restart)", vm(runOff, graced(vmi(kubevirt.PhaseScheduled, true), 1)), false},
			{"stopped: Halted, no VMI", vm(runOff, nil), false},
			{"stopped: Halted, VMI final", vm(runOff, vmi(kubevirt.PhaseFailed, true)), false},
		} {
			if kind == system.ResetPushPowerButton && tc.vm.VMI != nil && tc.vm.VMI.GetDeletionTimestamp() == nil {
				continue // reads PoweringOn: the button powers off
			}
			t.Run(string(kind)+"/"+tc.name, func(t *testing.T) {
				w := &oneRead{vm: tc.vm}
				err := New(w, nil, nil).Reset(t.Context(), tc.vm.Key, kind)
				conflict, ok := errors.AsType[*ResetConflictError](err)
				if !tc.conflict {
					if err != nil || len(w.powers) != 1 || w.powers[0].RunStrategy != runOn {
						t.Fatalf("Reset = %v, writes %+v: want accepted, runStrategy %s", err, w.powers, runOn)
					}
					return
				}
				if !ok || conflict.ResetType != kind || conflict.Reason != stillStopping || !errors.Is(err, ErrBusy) {
					t.Fatalf("Reset = %v, want a ResetConflictError on %s: %s", err, kind, stillStopping)
				}
				if len(w.powers) != 0 || w.reqs != nil {
					t.Errorf("refused Reset wrote %+v, requests %v", w.powers, w.reqs)
				}
			})
		}
	}
}

// TestOnRightAfterForceOff: the bridge's cache may still show the grace
// period virt-api has just cut (a ForceOff answered a moment ago, Ironic
// 21.4's reboot sending On at once, which it does not retry): the
// stopping check is confirmed on the live VMI, and the On is accepted.
func TestOnRightAfterForceOff(t *testing.T) {
	key := system.Key{Namespace: "ns1", Name: "vm1"}
	cached := graced(vmi(kubevirt.PhaseRunning, true), 3600)
	live := graced(vmi(kubevirt.PhaseRunning, true), 0)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{kubevirt.VirtualMachineInstances: "VirtualMachineInstanceList"}, live)
	vm := &apply.VM{Key: key, Object: &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"runStrategy": string(runOff)}}}, VMI: cached}
	w := &oneRead{vm: vm}
	if err := New(w, dyn, nil).Reset(t.Context(), key, system.ResetOn); err != nil {
		t.Fatalf("On with the live VMI's grace cut to 0: %v, want accepted", err)
	}
	if len(w.powers) != 1 || w.powers[0].RunStrategy != runOn {
		t.Errorf("writes %+v, want runStrategy %s", w.powers, runOn)
	}
	// The live VMI still in its graceful stop: refused.
	dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{kubevirt.VirtualMachineInstances: "VirtualMachineInstanceList"}, graced(vmi(kubevirt.PhaseRunning, true), 3600))
	if _, ok := errors.AsType[*ResetConflictError](New(&oneRead{vm: vm}, dyn, nil).Reset(t.Context(), key, system.ResetOn)); !ok {
		t.Errorf("On with the live VMI in its graceful stop: want a ResetConflictError")
	}
}
