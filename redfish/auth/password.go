package auth

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// password checks name's password from peer ip. A password verified
// within basicCacheTTL is accepted without hashing; any other check is
// reserved with the throttle first ([Throttle.Begin]: one check per
// address and user at a time, running checks counted as failures).
//
// Then hashing (bcrypt, ~50-100 ms of a CPU) is shared so that a flood of
// bad logins cannot starve the real ones:
//
//   - a known user's check waits for a hashing slot (Config.MaxHashing),
//     users who logged in here recently first, then the other known users,
//     first come first served within each; a check that finds its queue
//     full or waits longer than Config.MaxHashWait is [ErrBusy] (503 with
//     Retry-After), never a failure of the request;
//   - an unknown user never waits for a slot: it is compared against a
//     dummy hash (so it costs what a known user costs and its timing tells
//     nothing) only while a slot is free and within dummyHashesPerSecond;
//     beyond that it waits as long as a compare takes, on a timer that
//     costs no CPU, and fails.
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
	if !known {
		if err := a.checkUnknown(ctx, password); err != nil {
			return User{}, err
		}
		att.Fail(a.cfg.Now())
		return User{}, ErrBadCredentials
	}
	now = a.cfg.Now()
	// The check this one waited for may have verified the same password.
	if a.cachedOK(name, password, u.PasswordHash, now) {
		att.Succeed(now)
		return u, nil
	}
	prio := prioKnown
	if a.cfg.Throttle.Recent(name, now) {
		prio = prioRecent
	}
	ok, err := a.check(ctx, prio, u.PasswordHash, password)
	if err != nil {
		return User{}, err
	}
	now = a.cfg.Now()
	if !ok {
		att.Fail(now)
		return User{}, ErrBadCredentials
	}
	a.remember(name, password, u.PasswordHash, now)
	att.Succeed(now)
	return u, nil
}

// dummyHashesPerSecond bounds the dummy compares of unknown users on a
// replica (each ~50-100 ms of a CPU).
const dummyHashesPerSecond = 2

// check compares password with hash once a hashing slot of priority prio
// is free.
func (a *Authenticator) check(ctx context.Context, prio int, hash []byte, password string) (bool, error) {
	if err := a.hashing.acquire(ctx, prio, a.cfg.MaxHashWait); err != nil {
		return false, err
	}
	defer a.hashing.release()
	return a.timedCompare(hash, []byte(password)) == nil, nil
}

// checkUnknown spends on an unknown user's password what a known user's
// check would, without queueing for a slot: a compare against the dummy
// hash when a slot is free and the budget allows, else a wait as long as
// a compare takes.
func (a *Authenticator) checkUnknown(ctx context.Context, password string) error {
	if a.dummies.Allow() && a.hashing.tryAcquire() {
		defer a.hashing.release()
		_ = a.timedCompare(a.dummy, []byte(password)) // never matches
		return nil
	}
	t := time.NewTimer(time.Duration(a.compareTook.Load()))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("check a password: %w", ctx.Err())
	}
}

// timedCompare is a.compare, keeping a moving average of how long a
// compare takes (compareTook).
func (a *Authenticator) timedCompare(hash, password []byte) error {
	start := time.Now()
	err := a.compare(hash, password)
	took := int64(time.Since(start))
	old := a.compareTook.Load()
	a.compareTook.Store(old + (took-old)/8)
	return err
}
