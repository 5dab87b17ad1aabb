package backend

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/power"
	"github.com/redfish-bridge/redfish-bridge/redfish"
)

// translate wraps a concern package's error with the redfish error class it
// belongs to, keeping the original in the chain for the log.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var badURL *download.InvalidURLError
	var busy *media.BusyError
	var badCert *media.InvalidCertificateError
	var full *media.TrustLimitError
	var refused *apply.RefusedError
	var resetConflict *power.ResetConflictError
	var status apierrors.APIStatus
	var netErr net.Error
	switch {
	case errors.As(err, &badURL):
		return fmt.Errorf("%w: %w", &redfish.BadValueError{Property: "Image", Value: badURL.URL, Reason: badURL.Reason}, err)
	case errors.As(err, &badCert):
		return fmt.Errorf("%w: %w", &redfish.BadValueError{Property: "CertificateString", Reason: badCert.Reason}, err)
	case errors.As(err, &full):
		return fmt.Errorf("%w: %w", &redfish.RefusedValueError{Property: "CertificateString", Value: "(the certificate posted)", Resolution: "The certificate is refused: " + full.Reason + "."}, err)
	case errors.Is(err, media.ErrForeignTrust):
		return fmt.Errorf("%w: %w", &redfish.ConflictError{Resolution: "A ConfigMap the bridge did not create holds the name of this slot's trust store. Remove or rename it, then retry."}, err)
	case errors.Is(err, media.ErrCertificateNotFound):
		return fmt.Errorf("%w: %w", redfish.ErrNotFound, err)
	case errors.Is(err, media.ErrInvalidSlot):
		return fmt.Errorf("%w: %w", redfish.ErrNotFound, err)
	case errors.As(err, &busy):
		return fmt.Errorf("%w: %w", &redfish.ConflictError{Resolution: fmt.Sprintf("The slot is importing %s. Eject the media first, then insert %s.", busy.Image, busy.Requested)}, err)
	case errors.As(err, &resetConflict):
		return fmt.Errorf("%w: %w", &redfish.ActionConflictError{Parameter: "ResetType", Value: string(resetConflict.ResetType),
			Resolution: "The reset conflicts with what the system is doing now: " + resetConflict.Reason + ". Retry the request."}, err)
	case errors.Is(err, power.ErrBusy):
		return fmt.Errorf("%w: %w", &redfish.ConflictError{Resolution: "The system's boot order kept changing during the power request. Retry the request."}, err)
	case errors.As(err, &refused):
		return fmt.Errorf("%w: %w", refusal(refused), err)
	case errors.Is(err, apply.ErrInvalid):
		return fmt.Errorf("%w: %w", &redfish.BadValueError{Property: "Boot", Reason: err.Error()}, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: %w", redfish.ErrNotFound, err)
	case apply.IsFieldConflict(err):
		return fmt.Errorf("%w: %w", &redfish.ConflictError{Resolution: "Another writer of the VirtualMachine owns a field this request sets (see its managedFields). Release the field there, then retry."}, err)
	case apierrors.IsConflict(err):
		return fmt.Errorf("%w: %w", redfish.ErrConflict, err)
	case apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsTooManyRequests(err), apierrors.IsInternalError(err):
		return fmt.Errorf("%w: %w", redfish.ErrUnavailable, err)
	case errors.As(err, &status):
		return err
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &netErr), // context.DeadlineExceeded is a net.Error
		rateLimitedPastDeadline(err):
		return fmt.Errorf("%w: %w", redfish.ErrUnavailable, err)
	}
	return err
}

// rateLimitedPastDeadline reports whether client-go's rate limiter refused
// a request because its token would come after the request's deadline: the
// apiserver is slower than the bridge's budget, as with a timeout.
// golang.org/x/time/rate returns this error without a sentinel, so it is
// recognised by its text.
func rateLimitedPastDeadline(err error) bool {
	return strings.Contains(err.Error(), "would exceed context deadline")
}
