package backend

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/util/flowcontrol"

	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
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
