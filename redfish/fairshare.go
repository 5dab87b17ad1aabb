package redfish

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// Every write (POST, PATCH, DELETE: each one or more apiserver writes)
// draws on the bridge's one client-side apiserver budget (--kube-qps),
// shared by every user and the reconcilers; reads come from the caches.
// So no user can use that budget up, each user has a share of it: a token
// bucket of writes per user. A write past it is refused at once with 429
// and Retry-After, before it reaches the apiserver, so other users'
// requests do not queue behind it; but only while another user contends
// (wrote, or tried to, within the last Contention): a user alone, such as
// the one Ironic conductor of most deployments, is never refused for the
// budget nobody else wants (sushy does not retry a 429). A login counts as one write of the user logging
// in (it records the session): a user whose share is spent is refused
// before the password is checked, and a successful login draws on it.

// WriteShare is each user's share of the apiserver budget.
type WriteShare struct {
	// PerSecond is the writes per second a user may make on average; 0
	// (or less) does not limit.
	PerSecond float64
	// Burst is the writes a user may make at once (at least 1).
	Burst int
	// Contention is how recently another user must have written for the
	// share to be enforced; default [DefaultContention].
	Contention time.Duration
}

// DefaultContention is how long a user's write counts as contending for
// the budget.
const DefaultContention = 30 * time.Second

// WriteThrottledError refuses a write of a user whose share is spent.
// 429 with Retry-After.
type WriteThrottledError struct {
	User       string
	RetryAfter time.Duration
	Share      WriteShare
}

func (e *WriteThrottledError) Error() string {
	return fmt.Sprintf("user %q is over its write share (%g a second, burst %d): retry in %s",
		e.User, e.Share.PerSecond, e.Share.Burst, e.RetryAfter)
}

// message is the Redfish error of the refusal, and its Retry-After.
func (e *WriteThrottledError) answer() *Error {
	secs := strconv.Itoa(max(1, int(math.Ceil(e.RetryAfter.Seconds()))))
	m := msg("GeneralError", nil)
	m.Resolution = fmt.Sprintf("Too many changes by this user (at most %g a second, %d at once): retry in %s seconds.",
		e.Share.PerSecond, e.Share.Burst, secs)
	return &Error{Status: http.StatusTooManyRequests, Messages: []Message{m}, Header: http.Header{"Retry-After": {secs}}, Cause: e}
}

// writeShares holds each user's bucket. Only authenticated users get one
// (their number is the users Secret's), so it does not grow unbounded.
type writeShares struct {
	share WriteShare
	mu    sync.Mutex
	users map[string]*rate.Limiter
	// last is when each user last wrote or tried to.
	last map[string]time.Time
}

// newWriteShares returns the buckets of share; nil (no limit) when
// share.PerSecond is not positive.
func newWriteShares(share WriteShare) *writeShares {
	if share.PerSecond <= 0 {
		return nil
	}
	share.Burst = max(1, share.Burst)
	if share.Contention <= 0 {
		share.Contention = DefaultContention
	}
	return &writeShares{share: share, users: map[string]*rate.Limiter{}, last: map[string]time.Time{}}
}

// take draws one write of user's share; a [*WriteThrottledError] when it
// is spent.
func (w *writeShares) take(user string, now time.Time) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	l, ok := w.users[user]
	if !ok {
		l = rate.NewLimiter(rate.Limit(w.share.PerSecond), w.share.Burst)
		w.users[user] = l
	}
	contended := w.contended(user, now)
	w.last[user] = now
	w.mu.Unlock()
	if l.AllowN(now, 1) || !contended {
		return nil
	}
	return &WriteThrottledError{User: user, RetryAfter: w.wait(l, now), Share: w.share}
}

// check reports, drawing nothing, whether user's share is spent now (a
// login's check before the password: no bucket is made for a name that
// is not a user's).
func (w *writeShares) check(user string, now time.Time) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	l, ok := w.users[user]
	contended := w.contended(user, now)
	w.mu.Unlock()
	if !ok || l.TokensAt(now) >= 1 || !contended {
		return nil
	}
	return &WriteThrottledError{User: user, RetryAfter: w.wait(l, now), Share: w.share}
}

// contended reports whether a user other than user wrote, or tried to,
// within the last Contention. Called with mu held.
func (w *writeShares) contended(user string, now time.Time) bool {
	for u, at := range w.last {
		if u != user && now.Sub(at) < w.share.Contention {
			return true
		}
	}
	return false
}

// wait is how long until l has a token.
func (w *writeShares) wait(l *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - l.TokensAt(now)
	return time.Duration(missing / w.share.PerSecond * float64(time.Second))
}

// limitWrites refuses the authenticated caller's write when its share is
// spent.
func (s *Server) limitWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.writes.take(principal(c).User, time.Now()); err != nil {
			return err
		}
		return next(c)
	}
}
