package power

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
	"github.com/redfish-bridge/redfish-bridge/system"
	"github.com/redfish-bridge/redfish-bridge/virtapi"
)

// answerForcer answers every forced call with err and counts the calls.
type answerForcer struct {
	err   error
	calls int
}

func (f *answerForcer) ForceStop(context.Context, string, string) error {
	f.calls++
	return f.err
}

func (f *answerForcer) ForceRestart(context.Context, string, string) error {
	f.calls++
	return f.err
}

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
	f := &answerForcer{err: notServed}
	s := New(nil, nil, f)
	for range 3 {
		if err := s.forceStop(ctx, vmWithVMI(int64(30), "Running")); err != nil {
			t.Fatalf("without virt-api: %v, want nil (graceful)", err)
		}
	}
	if n := strings.Count(logs.String(), "cannot force power-offs and restarts"); n != 1 || f.calls != 3 {
		t.Errorf("without virt-api: %d warnings for %d calls, want 1 for 3:\n%s", n, f.calls, logs.String())
	}
	f.err = apierrors.NewConflict(schema.GroupResource{Resource: "virtualmachine"}, "vm", errors.New("Halted only supports manual stop requests with a shorter graceperiod"))
	if err := s.forceStop(ctx, vmWithVMI(int64(30), "Running")); err != nil {
		t.Errorf("virt-api's 409: %v, want nil", err)
	}
	f.err = apierrors.NewForbidden(schema.GroupResource{Group: "subresources.kubevirt.io", Resource: "virtualmachines/stop"}, "vm", errors.New("no RBAC"))
	if err := s.forceStop(ctx, vmWithVMI(nil, "Running")); !apierrors.IsForbidden(err) {
		t.Errorf("virt-api's 403: %v, want it passed on", err)
	}
	before := f.calls
	for _, vm := range []*apply.VM{vmWithVMI(int64(0), "Running"), vmWithVMI(int64(30), "Succeeded"), {Key: system.Key{Namespace: "ns", Name: "vm"}}} {
		if err := s.forceStop(ctx, vm); err != nil {
			t.Fatal(err)
		}
	}
	if f.calls != before {
		t.Errorf("virt-api asked %d times for VMIs at grace 0, final or absent, want 0", f.calls-before)
	}
}

// TestForceRestartAnswers: ForceRestart asks virt-api instead of adding its
// own requests, is ErrBusy while a request is pending, and without virt-api
// falls back to the bridge's own (graceful) restart.
func TestForceRestartAnswers(t *testing.T) {
	ctx := t.Context()
	f := &answerForcer{}
	s := New(nil, nil, f)
	if forced, err := s.forceRestart(ctx, vmWithVMI(int64(30), "Running")); !forced || err != nil || f.calls != 1 {
		t.Errorf("forced %v err %v calls %d, want forced by one call", forced, err, f.calls)
	}
	pending := vmWithVMI(int64(30), "Running")
	_ = unstructured.SetNestedSlice(pending.Object.Object, []any{map[string]any{"action": "Start"}}, "status", "stateChangeRequests")
	if _, err := s.forceRestart(ctx, pending); !errors.Is(err, ErrBusy) || f.calls != 1 {
		t.Errorf("with a pending request: err %v after %d calls, want ErrBusy without a call", err, f.calls)
	}
	f.err = virtapi.ErrNotServed
	if forced, err := s.forceRestart(ctx, vmWithVMI(int64(30), "Running")); forced || err != nil {
		t.Errorf("without virt-api: forced %v err %v, want the bridge's own restart", forced, err)
	}
	if forced, err := New(nil, nil, nil).forceRestart(ctx, vmWithVMI(int64(30), "Running")); forced || err != nil {
		t.Errorf("without a Forcer: forced %v err %v, want the bridge's own restart", forced, err)
	}
}
