package apply

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestRebootPolicyRefused: the answers a cluster gives when it does not take
// rebootPolicy are recognised, anything else (a conflict, another invalid
// field, a plain error) is not.
func TestRebootPolicyRefused(t *testing.T) {
	vmGR := schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}
	webhook := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: `admission webhook "virtualmachine-validator.kubevirt.io" denied the request: Reboot policy support is experimental on this platform. But feature gate 'RebootPolicy' is not enabled`,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
			Type: metav1.CauseTypeFieldValueNotSupported, Field: "spec.template.spec.domain.rebootPolicy",
			Message: "Reboot policy support is experimental on this platform. But feature gate 'RebootPolicy' is not enabled",
		}}},
	}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"KubeVirt webhook, gate off", fmt.Errorf("redfish-boot apply to ns/vm: %w", webhook), true},
		{"cause field only", &apierrors.StatusError{ErrStatus: metav1.Status{Code: 422, Message: "denied",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Field: "spec.template.spec.domain.rebootPolicy"}}}}}, true},
		{"schema without the field", apierrors.NewBadRequest(".spec.template.spec.domain.rebootPolicy: field not declared in schema"), true},
		{"admission policy", apierrors.NewInvalid(schema.GroupKind{Group: "kubevirt.io", Kind: "VirtualMachine"}, "vm", nil), false},
		{"conflict naming it", apierrors.NewConflict(vmGR, "vm", errors.New("rebootPolicy changed")), false},
		{"other invalid field", apierrors.NewBadRequest("bootOrder must be unique"), false},
		{"not an API error", errors.New("rebootPolicy"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RebootPolicyRefused(tt.err); got != tt.want {
				t.Errorf("RebootPolicyRefused(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestWithoutRebootPolicy: the field goes, and so do parents it alone held;
// siblings stay.
func TestWithoutRebootPolicy(t *testing.T) {
	alone := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "vm"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"domain": map[string]any{"rebootPolicy": "Terminate"}}}},
	}}
	if diff := cmp.Diff(map[string]any{"metadata": map[string]any{"name": "vm"}}, withoutRebootPolicy(alone).Object); diff != "" {
		t.Errorf("alone (-want +got):\n%s", diff)
	}
	if !hasRebootPolicy(alone) {
		t.Error("the input was modified")
	}
	withDevices := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"domain": map[string]any{
			"rebootPolicy": "Terminate", "devices": map[string]any{"disks": []any{}}}}}},
	}}
	want := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"domain": map[string]any{
		"devices": map[string]any{"disks": []any{}}}}}}}
	if diff := cmp.Diff(want, withoutRebootPolicy(withDevices).Object); diff != "" {
		t.Errorf("with devices (-want +got):\n%s", diff)
	}
}
