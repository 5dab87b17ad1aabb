package auth

import (
	"context"
	"errors"
	"fmt"
)

// password checks name's password from peer ip. A password verified
// within basicCacheTTL is accepted without hashing; any other check is
// reserved with the throttle first ([Throttle.Begin]: one check per
// address and user at a time, running checks counted as failures) and
// then waits for a hashing slot (Config.MaxHashing), so a burst of
// concurrent guesses costs no more hashing than the same guesses in a row.
func (a *Authenticator) password(ctx context.Context, ip, name, password string) (User, error) {
	now := a.cfg.Now()
	if wait := a.cfg.Throttle.Check(ip, name, now); wait > 0 {
		return User{}, &ThrottledError{RetryAfter: wait}
	}
	u, err := a.cfg.Users.Lookup(ctx, name)
	known := err == nil
	if err != nil && !errors.Is(err, ErrNoSuchUser) {
		return User{}, fmt.Errorf("look up user %q: %w", name, err)
	}
	if known && a.cachedOK(name, password, u.PasswordHash, now) {
		a.cfg.Throttle.Succeed(ip, name, now)
		return u, nil
	}
	att, err := a.cfg.Throttle.Begin(ctx, ip, name, a.cfg.Now)
	if err != nil {
		return User{}, err
	}
	defer att.Abandon()
	now = a.cfg.Now()
	// The check this one waited for may have verified the same password.
	if known && a.cachedOK(name, password, u.PasswordHash, now) {
		att.Succeed(now)
		return u, nil
	}
	hash := a.dummy // an unknown user costs what a known one does
	if known {
		hash = u.PasswordHash
	}
	ok, err := a.check(ctx, hash, password)
	if err != nil {
		return User{}, err
	}
	now = a.cfg.Now()
	if !ok || !known {
		att.Fail(now)
		return User{}, ErrBadCredentials
	}
	a.remember(name, password, u.PasswordHash, now)
	att.Succeed(now)
	return u, nil
}

// check compares password with hash once a hashing slot is free.
func (a *Authenticator) check(ctx context.Context, hash []byte, password string) (bool, error) {
	select {
	case a.hashing <- struct{}{}:
	case <-ctx.Done():
		return false, fmt.Errorf("wait to check a password: %w", ctx.Err())
	}
	defer func() { <-a.hashing }()
	return a.compare(hash, []byte(password)) == nil, nil
}
