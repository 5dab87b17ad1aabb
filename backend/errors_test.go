package backend

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/redfish-bridge/redfish-bridge/apply"
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
