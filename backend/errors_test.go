package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestTranslateBusy: a power-on refused because the system is in a
// transition is a Redfish conflict (409, which Ironic retries), not an
// unclassified error (500).
func TestTranslateBusy(t *testing.T) {
	err := translate(fmt.Errorf("power on ns/vm: boot order kept changing: %w", power.ErrBusy))
	if !errors.Is(err, redfish.ErrConflict) {
		t.Errorf("translate(ErrBusy) = %v, want it to wrap redfish.ErrConflict", err)
	}
	if !errors.Is(err, power.ErrBusy) {
		t.Errorf("translate(ErrBusy) = %v lost the cause", err)
	}
}

// TestTranslateConflictsSayWhy: each conflict a concern package reports
// reaches the client as 409 with a Resolution naming its cause.
func TestTranslateConflictsSayWhy(t *testing.T) {
	fieldConflict := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldManagerConflict, Field: ".spec.runStrategy"}}},
	}}
	for _, tc := range []struct {
		name string
		err  error
		want string // in the Resolution
	}{
		{"slot importing", &media.BusyError{Slot: "cd0", Image: "http://a/1.iso", Requested: "http://a/2.iso"}, "The slot is importing http://a/1.iso. Eject the media first, then insert http://a/2.iso."},
		{"power in transition", fmt.Errorf("power on: %w", power.ErrBusy), "boot order kept changing"},
		{"foreign trust", fmt.Errorf("trust: %w", media.ErrForeignTrust), "ConfigMap the bridge did not create"},
		{"field owned by another writer", fieldConflict, "owns a field this request sets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := translate(tc.err)
			var conflict *redfish.ConflictError
			if !errors.As(err, &conflict) || !errors.Is(err, redfish.ErrConflict) {
				t.Fatalf("translate(%v) = %v, want a redfish.ConflictError", tc.err, err)
			}
			if !strings.Contains(conflict.Resolution, tc.want) {
				t.Errorf("Resolution %q, want it to contain %q", conflict.Resolution, tc.want)
			}
		})
	}
}

// TestTranslateDeadline: an apiserver request that did not fit in the
// request's deadline, whether the apiserver was slow or client-go's rate
// limiter would have waited past the deadline, is 503 (Retry-After), not
// 500: the bridge is fine, the apiserver behind it is busy.
func TestTranslateDeadline(t *testing.T) {
	limiter := flowcontrol.NewTokenBucketRateLimiter(0.001, 1)
	limiter.Accept() // the only token
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	waitErr := limiter.Wait(ctx)
	if waitErr == nil {
		t.Fatal("the rate limiter handed out a second token")
	}
	expired, cancelExpired := context.WithTimeout(t.Context(), 0)
	defer cancelExpired()
	<-expired.Done()
	for name, err := range map[string]error{
		// As client-go's rest.Request wraps it (request.go tryThrottle).
		"rate limiter": fmt.Errorf("get ns/vm: client rate limiter Wait returned an error: %w", waitErr),
		"deadline":     fmt.Errorf("get ns/vm: %w", expired.Err()),
	} {
		if got := translate(err); !errors.Is(got, redfish.ErrUnavailable) || !errors.Is(got, err) {
			t.Errorf("%s: translate(%v) = %v, want it to wrap redfish.ErrUnavailable and the cause", name, err, got)
		}
	}
}

// TestTranslateResetRefused: the one refusal of the power path no request
// reaches (the service refuses a ResetType outside its list before calling
// the backend) still names ResetType, the value and why, and stays
// [apply.ErrInvalid].
func TestTranslateResetRefused(t *testing.T) {
	err := power.New(nil, nil, nil).Reset(t.Context(), system.Key{Namespace: "ns", Name: "vm"}, "Nmi")
	if !errors.Is(err, apply.ErrInvalid) {
		t.Fatalf("Reset(Nmi) = %v, want apply.ErrInvalid", err)
	}
	refused, ok := errors.AsType[*redfish.RefusedValueError](translate(err))
	if !ok {
		t.Fatalf("translate(%v) is not a RefusedValueError", err)
	}
	want := redfish.RefusedValueError{Property: "ResetType", Value: "Nmi",
		Resolution: "The bridge does not implement this ResetType: use one of the ResetType@Redfish.AllowableValues."}
	if diff := cmp.Diff(want, *refused); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
}

// TestTranslateResetConflict: a Reset the system's transition refuses for
// now reaches the client as 409 ActionParameterValueConflict on ResetType
// (redfish.ActionConflictError, the message Ironic 39 retries a power-on
// on), its Resolution saying what the system is doing; the cause stays in
// the chain.
func TestTranslateResetConflict(t *testing.T) {
	cause := &power.ResetConflictError{ResetType: system.ResetOn, Reason: "the system is still powering off"}
	err := translate(fmt.Errorf("power on ns/vm: %w", cause))
	got, ok := errors.AsType[*redfish.ActionConflictError](err)
	if !ok || !errors.Is(err, redfish.ErrConflict) || !errors.Is(err, power.ErrBusy) {
		t.Fatalf("translate = %v, want a redfish.ActionConflictError keeping power.ErrBusy", err)
	}
	want := redfish.ActionConflictError{Parameter: "ResetType", Value: "On",
		Resolution: "The reset conflicts with what the system is doing now: the system is still powering off. Retry the request."}
	if d := cmp.Diff(want, *got); d != "" {
		t.Errorf("conflict (-want +got):\n%s", d)
	}
}
