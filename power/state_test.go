package power

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

func vmi(phase kubevirt.Phase, deleting bool, conds ...map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
		"metadata": map[string]any{"name": "vm1", "namespace": "ns1", "uid": "u1"},
		"status":   map[string]any{},
	}}
	if phase != "" {
		u.Object["status"].(map[string]any)["phase"] = string(phase)
	}
	if len(conds) > 0 {
		var cs []any
		for _, c := range conds {
			cs = append(cs, c)
		}
		u.Object["status"].(map[string]any)["conditions"] = cs
	}
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
	}
	return u
}

func TestState(t *testing.T) {
	pausedTrue := map[string]any{"type": "Paused", "status": "True"}
	pausedFalse := map[string]any{"type": "Paused", "status": "False"}
	tests := []struct {
		name string
		vmi  *unstructured.Unstructured
		want system.PowerState
	}{
		{"no VMI", nil, system.PowerOff},
		{"no phase yet", vmi("", false), system.PowerPoweringOn},
		{"pending", vmi(kubevirt.PhasePending, false), system.PowerPoweringOn},
		{"scheduling", vmi(kubevirt.PhaseScheduling, false), system.PowerPoweringOn},
		{"scheduled", vmi(kubevirt.PhaseScheduled, false), system.PowerPoweringOn},
		{"running", vmi(kubevirt.PhaseRunning, false), system.PowerOn},
		{"running, paused", vmi(kubevirt.PhaseRunning, false, pausedTrue), system.PowerPaused},
		{"running, paused condition false", vmi(kubevirt.PhaseRunning, false, pausedFalse), system.PowerOn},
		{"running, being deleted", vmi(kubevirt.PhaseRunning, true), system.PowerPoweringOff},
		{"succeeded", vmi(kubevirt.PhaseSucceeded, false), system.PowerOff},
		{"failed, being deleted", vmi(kubevirt.PhaseFailed, true), system.PowerOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := State(&apply.VM{VMI: tt.vmi}); got != tt.want {
				t.Errorf("State = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestStateRebooting: while the bridge follows a guest reboot (the watched
// VMI ended, the next not yet Running) Redfish sees On; switched off, Off.
func TestStateRebooting(t *testing.T) {
	withUID := func(u *unstructured.Unstructured, uid string) *unstructured.Unstructured {
		u.SetUID(types.UID(uid))
		return u
	}
	vmWith := func(runStrategy kubevirt.RunStrategyValue) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"runStrategy": string(runStrategy)}}}
	}
	tests := []struct {
		name        string
		runStrategy kubevirt.RunStrategyValue
		watch       string
		vmi         *unstructured.Unstructured
		want        system.PowerState
	}{
		{"watched VMI Succeeded", runOn, "u1", withUID(vmi(kubevirt.PhaseSucceeded, false), "u1"), system.PowerOn},
		{"watched VMI being removed", runOn, "u1", withUID(vmi(kubevirt.PhaseSucceeded, true), "u1"), system.PowerOn},
		{"no VMI yet", runOn, "u1", nil, system.PowerOn},
		{"next VMI pending", runOn, "u1", withUID(vmi(kubevirt.PhasePending, false), "u2"), system.PowerOn},
		{"next VMI running", runOn, "u1", withUID(vmi(kubevirt.PhaseRunning, false), "u2"), system.PowerOn},
		{"watched VMI still running", runOn, "u1", withUID(vmi(kubevirt.PhaseRunning, false), "u1"), system.PowerOn},
		{"switched off since", runOff, "u1", nil, system.PowerOff},
		{"no watch: a guest shutdown is Off", runOn, "", withUID(vmi(kubevirt.PhaseSucceeded, false), "u1"), system.PowerOff},
		{"no watch: pending is PoweringOn", runOn, "", withUID(vmi(kubevirt.PhasePending, false), "u2"), system.PowerPoweringOn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := &apply.VM{Object: vmWith(tt.runStrategy), VMI: tt.vmi, Boot: system.BootOverride{RebootVMI: tt.watch}}
			if got := State(vm); got != tt.want {
				t.Errorf("State = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestStateStartPending: a power-on the bridge accepted (runStrategy
// RerunOnFailure, a Start request virt-controller has not acted on) reads
// PoweringOn while no VMI runs yet, as after a ForceOff of a VM still
// starting, when KubeVirt backs the next start off for 10 s and more; a
// power-off (Start withdrawn, Halted) or a VMI running ends it.
func TestStateStartPending(t *testing.T) {
	vmWith := func(runStrategy kubevirt.RunStrategyValue, reqs ...kubevirt.StateChangeRequest) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"runStrategy": string(runStrategy)}}}
		if len(reqs) > 0 {
			u.Object["status"] = map[string]any{"stateChangeRequests": kubevirt.EncodeStateChangeRequests(reqs)}
		}
		return u
	}
	start := kubevirt.StateChangeRequest{Action: kubevirt.StartRequest}
	stop := kubevirt.StateChangeRequest{Action: kubevirt.StopRequest, UID: "u1"}
	tests := []struct {
		name string
		vm   *unstructured.Unstructured
		vmi  *unstructured.Unstructured
		want system.PowerState
	}{
		{"start pending, no VMI (KubeVirt's start backoff)", vmWith(runOn, start), nil, system.PowerPoweringOn},
		{"start pending, the stopped VMI still deleting", vmWith(runOn, start), vmi(kubevirt.PhaseScheduled, true), system.PowerPoweringOn},
		{"start pending, the failed VMI not yet removed", vmWith(runOn, start), vmi(kubevirt.PhaseFailed, false), system.PowerPoweringOn},
		{"restart: stop then start pending", vmWith(runOn, stop, start), vmi(kubevirt.PhaseRunning, true), system.PowerPoweringOn},
		{"start pending, VMI running", vmWith(runOn, start), vmi(kubevirt.PhaseRunning, false), system.PowerOn},
		{"no request, no VMI", vmWith(runOn), nil, system.PowerOff},
		{"only a stop pending, VMI deleting", vmWith(runOn, stop), vmi(kubevirt.PhaseRunning, true), system.PowerPoweringOff},
		{"powered off: Halted", vmWith(runOff, start), nil, system.PowerOff},
		{"powered off, VMI deleting", vmWith(runOff), vmi(kubevirt.PhaseRunning, true), system.PowerPoweringOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := State(&apply.VM{Object: tt.vm, VMI: tt.vmi}); got != tt.want {
				t.Errorf("State = %s, want %s", got, tt.want)
			}
		})
	}
}
