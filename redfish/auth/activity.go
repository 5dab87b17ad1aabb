package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// DefaultSessionMaxLifetime is [Config.SessionMaxLifetime]'s default. A
// session in use never ends by inactivity, so something must bound what a
// stolen token is worth: a day is longer than any Ironic deploy or
// inspection (sushy logs in again on a 401 in any case) and short enough
// that a token found in a log or a core dump is dead by the next day.
const DefaultSessionMaxLifetime = 24 * time.Hour

// Sessions end by inactivity, as Redfish's SessionTimeout says, across
// replicas: the open session's record in [Sessions] (shared by every
// replica) holds its end by inactivity, and a request on any replica
// pushes it back. Writing that record on every request would cost an
// apiserver write per request, so a use writes only when the recorded
// end is less than SessionTTL away, and then sets it SessionTTL plus
// touchSlack (a tenth of SessionTTL) ahead: a session in use costs at
// most one write per touchSlack (3 minutes at the default 30-minute
// timeout) whatever its request rate, and ends between SessionTTL and
// SessionTTL + touchSlack after its last use, never before. (A token
// carrying its own last use cannot work: the client keeps the token it
// got at login.) The token itself expires SessionMaxLifetime after the
// login, however busy the session.

// touchSlack is how much later than SessionTTL after its last use a
// session may end: the write interval of a session in use.
func (a *Authenticator) touchSlack() time.Duration { return a.cfg.SessionTTL / 10 }

// idleEnd is the end by inactivity of a session used at now whose token
// expires at end.
func (a *Authenticator) idleEnd(now, end time.Time) time.Time {
	idle := now.Add(a.cfg.SessionTTL + a.touchSlack()).Truncate(time.Second)
	if idle.After(end) {
		return end
	}
	return idle
}

// active checks that the session of claims c is open and was used within
// SessionTTL, records this use, and returns the session's end. Without
// [Config.Sessions] a session ends when its token expires.
func (a *Authenticator) active(ctx context.Context, c claims) (time.Time, error) {
	end := time.Unix(c.Expires, 0)
	if a.cfg.Sessions == nil {
		return end, nil
	}
	now := a.cfg.Now()
	s, ok, err := a.cfg.Sessions.Lookup(ctx, c.Session, now)
	switch {
	case err != nil:
		return time.Time{}, fmt.Errorf("look up session %s: %w: %w", c.Session, ErrUnavailable, err)
	case !ok:
		return time.Time{}, fmt.Errorf("%w: session ended", ErrInvalidToken)
	case !now.Before(s.Expires):
		return time.Time{}, fmt.Errorf("%w: session unused for %s", ErrInvalidToken, a.cfg.SessionTTL)
	}
	if !s.Expires.Before(now.Add(a.cfg.SessionTTL)) {
		return s.Expires, nil // recorded far enough ahead: no write
	}
	next := a.idleEnd(now, end)
	if !next.After(s.Expires) {
		return s.Expires, nil // at the token's end already
	}
	err = a.cfg.Sessions.Touch(ctx, Session{ID: s.ID, User: s.User, Expires: next})
	switch {
	case errors.Is(err, ErrNoSuchSession):
		return time.Time{}, fmt.Errorf("%w: session ended", ErrInvalidToken)
	case err != nil:
		// The session stays open until its recorded end; the next use
		// writes again.
		logctx.From(ctx).Warn("session use not recorded", "session", c.Session, "err", err)
		return s.Expires, nil
	}
	return next, nil
}
