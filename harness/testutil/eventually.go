package testutil

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Eventually calls cond every interval until it returns nil, and returns
// how long that took. When timeout passes, or the test's context ends, it
// fails the test with what and cond's last error.
func Eventually(t testing.TB, what string, timeout, interval time.Duration, cond func(ctx context.Context) error) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	for {
		last := cond(ctx)
		if last == nil {
			return time.Since(start)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not reached in %s: %v", what, time.Since(start).Round(time.Millisecond), last)
			return time.Since(start)
		case <-time.After(interval):
		}
	}
}

// Holds adapts a condition that reports whether it holds and, when not,
// what it saw, to [Eventually].
func Holds(cond func() (bool, string)) func(context.Context) error {
	return func(context.Context) error {
		if ok, last := cond(); !ok {
			return errors.New(last)
		}
		return nil
	}
}

// True adapts a plain predicate to [Eventually].
func True(cond func() bool) func(context.Context) error {
	return func(context.Context) error {
		if !cond() {
			return errors.New("not yet")
		}
		return nil
	}
}

// Never checks every interval, for window, that cond stays nil, and fails
// the test with what and cond's error the first time it does not. It is the
// one window of time a test may watch, for a "nothing happens" check that
// has no event to wait on: on a loaded machine it can only miss a late
// change (pass wrongly), never fail a correct product. Prefer waiting on the
// event that shows the decision was made.
func Never(t testing.TB, what string, window, interval time.Duration, cond func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), window)
	defer cancel()
	for {
		if err := cond(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
