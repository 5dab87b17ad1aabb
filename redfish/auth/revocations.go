package auth

import (
	"context"
	"errors"
	"time"
)

// ErrUnavailable is returned (wrapped) by [Authenticator.Logout] when the
// revocation could not be recorded (the session stays valid everywhere, a
// retry may succeed) and by [Authenticator.Token] when the revocations
// cannot be consulted.
var ErrUnavailable = errors.New("session state unavailable")

// Revocations records logged-out sessions until their tokens expire. Every
// replica must see every revocation, so production backs it with a shared
// Kubernetes object.
type Revocations interface {
	// Revoke marks session id of user as logged out; until is when its
	// token expires anyway, after which the record may be dropped.
	Revoke(ctx context.Context, id, user string, until time.Time) error
	// Revoked reports whether session id was logged out.
	Revoked(ctx context.Context, id string) (bool, error)
}
