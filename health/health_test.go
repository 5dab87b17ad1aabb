package health

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/system"
)

const (
	t0 = "2026-12-03T10:00:00Z"
	t1 = "2026-12-03T10:00:05Z"
	t2 = "2026-12-03T10:00:09Z"
)

func vmWith(status map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "vm", "namespace": "ns"},
		"status":   status,
	}}
}

func vmiIn(phase string, conds ...map[string]any) *unstructured.Unstructured {
	var cs []any
	for _, c := range conds {
		cs = append(cs, c)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
		"metadata": map[string]any{"name": "vm", "namespace": "ns"},
		"status": map[string]any{
			"phase":      phase,
			"conditions": cs,
			"phaseTransitionTimestamps": []any{
				map[string]any{"phase": "Pending", "phaseTransitionTimestamp": t0},
				map[string]any{"phase": "Scheduling", "phaseTransitionTimestamp": t0},
				map[string]any{"phase": "Scheduled", "phaseTransitionTimestamp": t1},
				map[string]any{"phase": "Running", "phaseTransitionTimestamp": t1},
				map[string]any{"phase": "Failed", "phaseTransitionTimestamp": t2},
				map[string]any{"phase": "Succeeded", "phaseTransitionTimestamp": t2},
			},
		},
	}}
}

func cond(typ, status, reason, at string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "lastTransitionTime": at}
}

func decoded(vm, vmi *unstructured.Unstructured, slots map[string]system.MediaSlot, p system.PowerIntent) *apply.VM {
	v := apply.Decode(context.Background(), system.Key{Namespace: "ns", Name: "vm"}, vm, vmi)
	for k, s := range slots {
		v.Slots[k] = s
	}
	v.Power = p
	return v
}

func TestOf(t *testing.T) {
	failed := map[string]system.MediaSlot{"cd0": {Slot: "cd0", Phase: system.MediaFailed, Reason: "404"}}
	ready := map[string]system.MediaSlot{"cd0": {Slot: "cd0", Phase: system.MediaReady}}
	tests := []struct {
		name  string
		vm    *unstructured.Unstructured
		vmi   *unstructured.Unstructured
		slots map[string]system.MediaSlot
		power system.PowerIntent
		want  system.Health
	}{
		{"stopped VM", vmWith(map[string]any{"printableStatus": "Stopped"}), nil, nil, system.PowerIntent{}, system.HealthOK},
		{"running VM with media", vmWith(map[string]any{"printableStatus": "Running"}), vmiIn("Running"), ready, system.PowerIntent{}, system.HealthOK},
		{"guest shut down", vmWith(map[string]any{"printableStatus": "Stopped"}), vmiIn("Succeeded"), nil, system.PowerIntent{}, system.HealthOK},
		{"failed import", vmWith(nil), nil, failed, system.PowerIntent{}, system.HealthWarning},
		{"dropped power-on", vmWith(nil), nil, nil, system.PowerIntent{DroppedReason: "virtual media cd0 failed: 404"}, system.HealthWarning},
		{"VMI failed", vmWith(map[string]any{"printableStatus": "Stopped"}), vmiIn("Failed"), nil, system.PowerIntent{}, system.HealthCritical},
		{"VMI failed beats failed import", vmWith(nil), vmiIn("Failed"), failed, system.PowerIntent{}, system.HealthCritical},
		{"crash loop", vmWith(map[string]any{"printableStatus": "CrashLoopBackOff"}), nil, nil, system.PowerIntent{}, system.HealthCritical},
		{"unschedulable", vmWith(map[string]any{"printableStatus": "ErrorUnschedulable"}), vmiIn("Pending"), nil, system.PowerIntent{}, system.HealthCritical},
		{"VMI could not be created", vmWith(map[string]any{"conditions": []any{cond("Failure", "True", "FailedCreate", t0)}}), nil, nil, system.PowerIntent{}, system.HealthCritical},
		{"Failure condition False", vmWith(map[string]any{"conditions": []any{cond("Failure", "False", "", t0)}}), nil, nil, system.PowerIntent{}, system.HealthOK},
		{"paused on I/O error", vmWith(nil), vmiIn("Running", cond("Paused", "True", "PausedIOError", t2)), nil, system.PowerIntent{}, system.HealthCritical},
		{"paused by the user", vmWith(nil), vmiIn("Running", cond("Paused", "True", "PausedByUser", t2)), nil, system.PowerIntent{}, system.HealthOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(decoded(tt.vm, tt.vmi, tt.slots, tt.power)); got != tt.want {
				t.Errorf("Of = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	deleting := vmiIn("Running")
	deleting.SetDeletionTimestamp(&metav1.Time{Time: at(t2)})
	noTimes := vmiIn("Running")
	unstructured.RemoveNestedField(noTimes.Object, "status", "phaseTransitionTimestamps")
	tests := []struct {
		name  string
		vmi   *unstructured.Unstructured
		state system.BootProgressState
		time  string // "" for none
	}{
		{"no VMI", nil, system.BootProgressNone, ""},
		{"pending", vmiIn("Pending"), system.BootProgressNone, t0},
		{"scheduled", vmiIn("Scheduled"), system.BootProgressNone, t1},
		{"running", vmiIn("Running"), system.BootProgressOSBootStarted, t1},
		{"running, agent connected", vmiIn("Running", cond("AgentConnected", "True", "", t2)), system.BootProgressOSRunning, t2},
		{"running, agent gone", vmiIn("Running", cond("AgentConnected", "False", "", t2)), system.BootProgressOSBootStarted, t1},
		{"running, KubeVirt recorded no time", noTimes, system.BootProgressOSBootStarted, ""},
		{"guest shut down", vmiIn("Succeeded"), system.BootProgressNone, t2},
		{"failed", vmiIn("Failed"), system.BootProgressNone, t2},
		{"being deleted", deleting, system.BootProgressNone, t2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Progress(decoded(vmWith(nil), tt.vmi, nil, system.PowerIntent{}))
			if got.LastState != tt.state {
				t.Errorf("LastState = %s, want %s", got.LastState, tt.state)
			}
			switch {
			case tt.time == "" && !got.LastStateTime.IsZero():
				t.Errorf("LastStateTime = %v, want none", got.LastStateTime)
			case tt.time != "" && !got.LastStateTime.Equal(at(tt.time)):
				t.Errorf("LastStateTime = %v, want %s", got.LastStateTime, tt.time)
			}
		})
	}
}
