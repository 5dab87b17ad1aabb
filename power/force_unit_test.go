package power

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
	"github.com/redfish-bridge/redfish-bridge/virtapi"
)

func vmWithVMI(grace any, phase string) *apply.VM {
	vmi := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "vm", "uid": "u1"}, "status": map[string]any{"phase": phase}}}
	if grace != nil {
		_ = unstructured.SetNestedField(vmi.Object, grace, "spec", "terminationGracePeriodSeconds")
	}
	return &apply.VM{Key: system.Key{Namespace: "ns", Name: "vm"}, Object: &unstructured.Unstructured{Object: map[string]any{}}, VMI: vmi}
}

// TestForceStopAnswers: which of virt-api's answers a ForceOff passes on.
// No virt-api is no error and warned about once per Service; its 409 is no
// error; anything else is. A VMI already at grace period 0, final, or
// absent is not asked about.
func TestForceStopAnswers(t *testing.T) {
	var logs bytes.Buffer
	ctx := logctx.Into(t.Context(), slog.New(slog.NewTextHandler(&logs, nil)))
	notServed := fmt.Errorf("virt-api stop of ns/vm: %w", virtapi.ErrNotServed)
	f := &countingForcer{err: notServed}
	s := New(nil, nil, f)
	for range 3 {
		if err := s.forceStop(ctx, vmWithVMI(int64(30), "Running")); err != nil {
			t.Fatalf("without virt-api: %v, want nil (graceful)", err)
		}
	}
	if n := strings.Count(logs.String(), "cannot force power-offs and restarts"); n != 1 || f.stops != 3 {
		t.Errorf("without virt-api: %d warnings for %d calls, want 1 for 3:\n%s", n, f.stops, logs.String())
	}
	f.err = apierrors.NewConflict(schema.GroupResource{Resource: "virtualmachine"}, "vm", errors.New("Halted only supports manual stop requests with a shorter graceperiod"))
	if err := s.forceStop(ctx, vmWithVMI(int64(30), "Running")); err != nil {
		t.Errorf("virt-api's 409: %v, want nil", err)
	}
	f.err = apierrors.NewForbidden(schema.GroupResource{Group: "subresources.kubevirt.io", Resource: "virtualmachines/stop"}, "vm", errors.New("no RBAC"))
	if err := s.forceStop(ctx, vmWithVMI(nil, "Running")); !apierrors.IsForbidden(err) {
		t.Errorf("virt-api's 403: %v, want it passed on", err)
	}
	before := f.stops
	for _, vm := range []*apply.VM{vmWithVMI(int64(0), "Running"), vmWithVMI(int64(30), "Succeeded"), {Key: system.Key{Namespace: "ns", Name: "vm"}}} {
		if err := s.forceStop(ctx, vm); err != nil {
			t.Fatal(err)
		}
	}
	if f.stops != before {
		t.Errorf("virt-api asked %d times for VMIs at grace 0, final or absent, want 0", f.stops-before)
	}
}

// TestForceRestartAnswers: ForceRestart asks virt-api's restart and adds
// no request of its own; with a request pending it asks virt-api's stop
// and adds the Start; without virt-api it is the bridge's own (graceful)
// Stop(uid)+Start; virt-api's 409 on the stop is ErrBusy.
func TestForceRestartAnswers(t *testing.T) {
	ctx := t.Context()
	f := &countingForcer{}
	s := New(nil, nil, f)
	if add, err := s.forceRestart(ctx, vmWithVMI(int64(30), "Running")); len(add) != 0 || err != nil || f.restarts != 1 || f.stops != 0 {
		t.Errorf("add %v err %v, %d restarts %d stops, want virt-api's restart alone", add, err, f.restarts, f.stops)
	}
	pending := vmWithVMI(int64(30), "Running")
	_ = unstructured.SetNestedSlice(pending.Object.Object, []any{map[string]any{"action": "Start"}}, "status", "stateChangeRequests")
	start := []kubevirt.StateChangeRequest{{Action: kubevirt.StartRequest}}
	if add, err := s.forceRestart(ctx, pending); !slices.Equal(add, start) || err != nil || f.restarts != 1 || f.stops != 1 {
		t.Errorf("with a pending request: add %v err %v, %d restarts %d stops, want virt-api's stop then the bridge's Start", add, err, f.restarts, f.stops)
	}
	f.err = apierrors.NewConflict(schema.GroupResource{Resource: "virtualmachine"}, "vm", errors.New("the test of the JSON patch failed"))
	if _, err := s.forceRestart(ctx, pending); !errors.Is(err, ErrBusy) {
		t.Errorf("virt-api's 409 with a pending request: %v, want ErrBusy", err)
	}
	own := restartRequests(pending)
	f.err = virtapi.ErrNotServed
	if add, err := s.forceRestart(ctx, vmWithVMI(int64(30), "Running")); !slices.Equal(add, own) || err != nil {
		t.Errorf("without virt-api: add %v err %v, want the bridge's own %v", add, err, own)
	}
	if add, err := New(nil, nil, nil).forceRestart(ctx, vmWithVMI(int64(30), "Running")); !slices.Equal(add, own) || err != nil {
		t.Errorf("without a Forcer: add %v err %v, want the bridge's own %v", add, err, own)
	}
}

// countingForcer answers every forced call with err and counts each kind.
type countingForcer struct {
	err             error
	stops, restarts int
}

func (f *countingForcer) ForceStop(context.Context, string, string) error {
	f.stops++
	return f.err
}

func (f *countingForcer) ForceRestart(context.Context, string, string) error {
	f.restarts++
	return f.err
}
