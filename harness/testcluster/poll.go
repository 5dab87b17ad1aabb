package testcluster

import (
	"context"
	"errors"
	"fmt"
	"time"
)

const pollInterval = 50 * time.Millisecond

// permanentError stops [poll] at once.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return &permanentError{err: err} }

// poll calls cond until it reports done, returns a permanent error, or ctx
// ends. Other errors are retried; the last one is reported on timeout.
func poll(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	var last error
	for {
		done, err := cond(ctx)
		if done && err == nil {
			return nil
		}
		if pe := (*permanentError)(nil); errors.As(err, &pe) {
			return fmt.Errorf("wait for %s: %w", what, pe.err)
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("wait for %s: %w (last error: %w)", what, ctx.Err(), last)
			}
			return fmt.Errorf("wait for %s: %w", what, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}
