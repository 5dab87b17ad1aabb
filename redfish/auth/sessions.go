package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrNoSuchSession is returned by [Authenticator.End] for a session that is
// not open (never opened, logged out or expired).
var ErrNoSuchSession = errors.New("no such session")

// ErrSessionLimit is returned (wrapped) by [Sessions.Opened], and so by
// [Authenticator.Login], when the store holds as many sessions as it can:
// a login waits for sessions to end or expire.
var ErrSessionLimit = errors.New("session limit reached")

// Session is an open session as [Sessions] records it.
type Session struct {
	ID, User string
	Expires  time.Time
}

// Sessions records the sessions opened on every replica until they expire
// or are revoked, so that an administrator can list and end other users'
// sessions. Production backs it, like [Revocations], with a shared
// Kubernetes object; a revoke through the same object drops the record.
type Sessions interface {
	// Opened records s until s.Expires; a store that is full returns an
	// error wrapping [ErrSessionLimit].
	Opened(ctx context.Context, s Session) error
	// Open returns the unexpired sessions not revoked.
	Open(ctx context.Context) ([]Session, error)
}

// OpenSessions returns the open sessions, sorted by id; without a
// [Config.Sessions] there are none to list.
func (a *Authenticator) OpenSessions(ctx context.Context) ([]Session, error) {
	if a.cfg.Sessions == nil {
		return nil, nil
	}
	ss, err := a.cfg.Sessions.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("list open sessions: %w", err)
	}
	now := a.cfg.Now()
	ss = slices.DeleteFunc(ss, func(s Session) bool { return !now.Before(s.Expires) })
	slices.SortFunc(ss, func(x, y Session) int { return strings.Compare(x.ID, y.ID) })
	return ss, nil
}

// End revokes open session id, whoever holds it; the caller checks that
// it may.
func (a *Authenticator) End(ctx context.Context, id string) error {
	ss, err := a.OpenSessions(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ss, func(s Session) bool { return s.ID == id })
	if i < 0 {
		return fmt.Errorf("end session %s: %w", id, ErrNoSuchSession)
	}
	return a.Logout(ctx, Principal{User: ss[i].User, Session: id, Expires: ss[i].Expires})
}
