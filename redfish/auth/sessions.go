package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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
	// Lookup returns open session id's record. A record that this
	// replica's view lacks, or shows expired by now, is looked up again
	// in a view confirmed after the call began, so that a login or a use
	// on another replica just before is seen; false means the session is
	// not open (never opened, revoked, or pruned after its expiry).
	Lookup(ctx context.Context, id string, now time.Time) (Session, bool, error)
	// Touch sets open session s.ID's expiry to s.Expires; an error
	// wrapping [ErrNoSuchSession] means the session is no longer recorded
	// (revoked meanwhile), and Touch never records it again.
	Touch(ctx context.Context, s Session) error
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

// DefaultMaxSessionsPerUser is [Config.MaxSessionsPerUser]'s default. A
// Redfish client opens one session and uses it until it expires (Ironic's
// conductor shares one per user and service root among all its nodes), so
// 100 leaves room for many conductors and tools while 100 users are needed
// to fill a store of 10,000.
const DefaultMaxSessionsPerUser = 100

// userLock serialises the logins of one user on this replica, so that
// concurrent logins cannot all pass the per-user bound.
type userLock struct {
	mu    sync.Mutex
	users int // logins holding or waiting for mu
}

// record records a session just opened, unless its user already holds
// MaxSessionsPerUser open sessions: the bound is exact on one replica, and
// across replicas may be passed by the logins that run at once on others.
func (a *Authenticator) record(ctx context.Context, s Session) error {
	if a.cfg.Sessions == nil {
		return nil
	}
	if limit := a.cfg.MaxSessionsPerUser; limit > 0 {
		unlock := a.lockUser(s.User)
		defer unlock()
		open, err := a.OpenSessions(ctx)
		if err != nil {
			return fmt.Errorf("count the open sessions of %q: %w", s.User, err)
		}
		n := 0
		for _, o := range open {
			if o.User == s.User {
				n++
			}
		}
		if n >= limit {
			return fmt.Errorf("record session of %q: %w: the user has %d open sessions, at most %d per user", s.User, ErrSessionLimit, n, limit)
		}
	}
	if err := a.cfg.Sessions.Opened(ctx, s); err != nil {
		return fmt.Errorf("record session of %q: %w", s.User, err)
	}
	return nil
}

// lockUser takes user's login lock and returns its release.
func (a *Authenticator) lockUser(user string) (unlock func()) {
	a.mu.Lock()
	l := a.logins[user]
	if l == nil {
		l = &userLock{}
		a.logins[user] = l
	}
	l.users++
	a.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		a.mu.Lock()
		if l.users--; l.users == 0 {
			delete(a.logins, user)
		}
		a.mu.Unlock()
	}
}
