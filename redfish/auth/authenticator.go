package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"
)

// ErrBadCredentials is returned for an unknown user or a wrong password (the
// two are not told apart).
var ErrBadCredentials = errors.New("invalid user name or password")

// ThrottledError is returned while a client must wait before trying again.
type ThrottledError struct{ RetryAfter time.Duration }

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed logins, retry in %s", e.RetryAfter.Round(time.Second))
}

// Principal is an authenticated caller.
type Principal struct {
	User  string
	Scope Scope
	// Session is the session id when the caller presented a session token,
	// "" for Basic auth.
	Session string
	Expires time.Time // of the session
	// ReadOnly callers read and write nothing ([User.ReadOnly]).
	ReadOnly bool
}

// Config configures an [Authenticator].
type Config struct {
	Users       Users
	Revocations Revocations
	// Sessions, if set, records every session opened, so that
	// [Authenticator.OpenSessions] lists them and [Authenticator.End] ends
	// any of them. A login whose session cannot be recorded fails: no
	// session is open that an administrator cannot see.
	Sessions Sessions
	// MaxSessionsPerUser bounds the open sessions of one user (0:
	// [DefaultMaxSessionsPerUser], negative: no bound), so that one user
	// cannot fill the session store for everybody: that user's next login
	// fails with [ErrSessionLimit], other users' do not.
	MaxSessionsPerUser int
	// Key signs session tokens; every replica must use the same one.
	Key []byte
	// SessionTTL is a session's inactivity timeout (Redfish's
	// SessionTimeout; default 30 minutes): with Sessions set, a session
	// ends once unused for SessionTTL (activity.go), and in any case
	// SessionMaxLifetime after its login; without Sessions (nothing
	// shared to record activity in) it ends SessionTTL after its login.
	SessionTTL time.Duration
	// SessionMaxLifetime bounds a session however busy (default
	// [DefaultSessionMaxLifetime]): its token carries that expiry.
	SessionMaxLifetime time.Duration
	// Throttle limits failed logins; nil uses [NewThrottle].
	Throttle *Throttle
	// MaxHashing bounds the password hashes (bcrypt, ~50-100 ms of a CPU
	// each) checked at once, whoever asks: further checks wait. Zero means
	// half the CPUs (GOMAXPROCS), at least one, so a flood of logins from
	// many addresses leaves the rest of the CPU to the service.
	MaxHashing int
	// MaxHashWait bounds how long a password check waits for a hashing
	// slot (default [DefaultMaxHashWait]); a check that waits longer, or
	// finds MaxHashing*[HashQueuePerSlot] checks of its priority already
	// waiting, fails with [ErrBusy] (503 with Retry-After) and decides
	// nothing.
	MaxHashWait time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Authenticator checks passwords and session tokens.
type Authenticator struct {
	cfg    Config
	signer signer
	// dummy is compared against for unknown users so they cost as much as
	// known ones.
	dummy []byte
	// hashing hands out the MaxHashing slots for password hashes.
	hashing *hashSlots
	// dummies is the budget of unknown users' dummy compares.
	dummies *rate.Limiter
	// compareTook is a moving average of a compare's duration, in
	// nanoseconds: what an unknown user's check waits when it does not
	// compare.
	compareTook atomic.Int64
	// compare is bcrypt.CompareHashAndPassword; tests count its calls.
	compare func(hash, password []byte) error

	mu    sync.Mutex
	basic map[[32]byte]time.Time // verified (user, password, hash) -> until
	// logins are the per-user locks of [Authenticator.record].
	logins map[string]*userLock
	// macs are HMAC-SHA256s keyed with the signer's key ([cacheKey]).
	macs sync.Pool
}

// Users is the source of accounts the authenticator checks against
// (the IPMI endpoint logs in the same users).
func (a *Authenticator) Users() Users { return a.cfg.Users }

// Throttle is the failed-login throttle (the IPMI endpoint counts its
// failures in it too).
func (a *Authenticator) Throttle() *Throttle { return a.cfg.Throttle }

// basicCacheTTL bounds how long a verified Basic password is trusted
// without running bcrypt again (Ironic polls power state every second).
const basicCacheTTL = time.Minute

// DefaultMaxHashWait is [Config.MaxHashWait]'s default: well inside a
// client's request timeout (sushy's is 60 s, the bridge's 30 s), so a
// check that cannot run answers 503 and is retried, never a 500.
const DefaultMaxHashWait = 5 * time.Second

// HashQueuePerSlot is how many checks of one priority may wait per
// hashing slot: ~64 compares of ~70 ms, about [DefaultMaxHashWait].
const HashQueuePerSlot = 64

// New returns an Authenticator.
func New(cfg Config) (*Authenticator, error) {
	s, err := newSigner(cfg.Key)
	if err != nil {
		return nil, err
	}
	if cfg.Users == nil || cfg.Revocations == nil {
		return nil, errors.New("auth: Users and Revocations are required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 30 * time.Minute
	}
	if cfg.SessionMaxLifetime <= 0 {
		cfg.SessionMaxLifetime = DefaultSessionMaxLifetime
	}
	if cfg.Throttle == nil {
		cfg.Throttle = NewThrottle()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	start := time.Now()
	dummy, err := bcrypt.GenerateFromPassword([]byte("no such user"), bcrypt.DefaultCost)
	if err != nil {
		return nil, fmt.Errorf("auth: dummy hash: %w", err)
	}
	took := time.Since(start) // what a compare at the default cost takes
	if cfg.MaxHashing <= 0 {
		cfg.MaxHashing = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if cfg.MaxHashWait <= 0 {
		cfg.MaxHashWait = DefaultMaxHashWait
	}
	if cfg.MaxSessionsPerUser == 0 {
		cfg.MaxSessionsPerUser = DefaultMaxSessionsPerUser
	}
	a := &Authenticator{cfg: cfg, signer: s, dummy: dummy, basic: map[[32]byte]time.Time{}, logins: map[string]*userLock{},
		hashing: newHashSlots(cfg.MaxHashing, cfg.MaxHashing*HashQueuePerSlot),
		dummies: rate.NewLimiter(dummyHashesPerSecond, dummyHashesPerSecond), compare: bcrypt.CompareHashAndPassword}
	a.compareTook.Store(int64(took))
	return a, nil
}

// SessionTTL is the inactivity timeout of sessions ([Config.SessionTTL]).
func (a *Authenticator) SessionTTL() time.Duration { return a.cfg.SessionTTL }

// Password checks a user name and password presented by peer ip (the TCP
// peer address). It is used for Basic auth and by [Authenticator.Login].
func (a *Authenticator) Password(ctx context.Context, ip, name, password string) (Principal, error) {
	u, err := a.password(ctx, ip, name, password)
	if err != nil {
		return Principal{}, err
	}
	return Principal{User: u.Name, Scope: u.Scope, ReadOnly: u.ReadOnly}, nil
}

// Login checks the password and opens a session, returning its token.
func (a *Authenticator) Login(ctx context.Context, ip, name, password string) (Principal, string, error) {
	u, err := a.password(ctx, ip, name, password)
	if err != nil {
		return Principal{}, "", err
	}
	p := Principal{User: u.Name, Scope: u.Scope, ReadOnly: u.ReadOnly}
	sid, err := newSessionID()
	if err != nil {
		return Principal{}, "", err
	}
	p.Session = sid
	now := a.cfg.Now()
	// The token carries the session's end however busy; the record, the
	// end by inactivity, which use pushes back (activity.go).
	p.Expires = now.Add(a.cfg.SessionTTL).Truncate(time.Second)
	end := p.Expires
	if a.cfg.Sessions != nil {
		end = now.Add(a.cfg.SessionMaxLifetime).Truncate(time.Second)
		p.Expires = a.idleEnd(now, end)
	}
	tok, err := a.signer.sign(claims{Session: sid, User: u.Name, Expires: end.Unix(), Password: a.signer.fingerprint(u.PasswordHash)})
	if err != nil {
		return Principal{}, "", err
	}
	if err := a.record(ctx, Session{ID: sid, User: u.Name, Expires: p.Expires}); err != nil {
		return Principal{}, "", err
	}
	return p, tok, nil
}

// Token validates a session token issued by any replica.
func (a *Authenticator) Token(ctx context.Context, token string) (Principal, error) {
	c, err := a.signer.verify(token, a.cfg.Now())
	if err != nil {
		return Principal{}, err
	}
	revoked, err := a.cfg.Revocations.Revoked(ctx, c.Session)
	if err != nil {
		return Principal{}, fmt.Errorf("check revocation of session %s: %w: %w", c.Session, ErrUnavailable, err)
	}
	if revoked {
		return Principal{}, fmt.Errorf("%w: logged out", ErrInvalidToken)
	}
	u, err := a.cfg.Users.Lookup(ctx, c.User)
	switch {
	case errors.Is(err, ErrNoSuchUser):
		return Principal{}, fmt.Errorf("%w: user removed", ErrInvalidToken)
	case err != nil:
		return Principal{}, fmt.Errorf("look up user %q: %w", c.User, err)
	}
	if !hmac.Equal([]byte(c.Password), []byte(a.signer.fingerprint(u.PasswordHash))) {
		return Principal{}, fmt.Errorf("%w: password changed", ErrInvalidToken)
	}
	expires, err := a.active(ctx, c)
	if err != nil {
		return Principal{}, err
	}
	return Principal{User: u.Name, Scope: u.Scope, Session: c.Session, Expires: expires, ReadOnly: u.ReadOnly}, nil
}

// Logout revokes the session of p (a no-op for Basic auth). An error
// wrapping [ErrUnavailable] means the session was not ended.
func (a *Authenticator) Logout(ctx context.Context, p Principal) error {
	if p.Session == "" {
		return nil
	}
	if err := a.cfg.Revocations.Revoke(ctx, p.Session, p.User, p.Expires); err != nil {
		return fmt.Errorf("revoke session %s: %w: %w", p.Session, ErrUnavailable, err)
	}
	return nil
}

// cacheKey is the HMAC of the length-prefixed name, password and hash
// ("<len>:" before each). A verified Basic password is looked up on every
// request, so the HMACs and their input buffers are pooled.
func (a *Authenticator) cacheKey(name, password string, hash []byte) [32]byte {
	m, _ := a.macs.Get().(*mac)
	if m == nil {
		m = &mac{h: hmac.New(sha256.New, a.signer.key)}
	}
	b := m.in[:0]
	for _, s := range []string{name, password} {
		b = append(strconv.AppendInt(b, int64(len(s)), 10), ':')
		b = append(b, s...)
	}
	b = append(strconv.AppendInt(b, int64(len(hash)), 10), ':')
	b = append(b, hash...)
	m.h.Reset()
	_, _ = m.h.Write(b) // a hash never fails to write
	var k [32]byte
	m.h.Sum(k[:0])
	m.in = b
	a.macs.Put(m)
	return k
}

// mac is a pooled HMAC with its input buffer.
type mac struct {
	h interface {
		io.Writer
		Reset()
		Sum(b []byte) []byte
	}
	in []byte
}

func (a *Authenticator) cachedOK(name, password string, hash []byte, now time.Time) bool {
	k := a.cacheKey(name, password, hash)
	a.mu.Lock()
	defer a.mu.Unlock()
	until, ok := a.basic[k]
	return ok && now.Before(until)
}

func (a *Authenticator) remember(name, password string, hash []byte, now time.Time) {
	k := a.cacheKey(name, password, hash)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.basic) >= 1000 {
		for k, until := range a.basic {
			if !now.Before(until) {
				delete(a.basic, k)
			}
		}
		if len(a.basic) >= 1000 {
			clear(a.basic)
		}
	}
	a.basic[k] = now.Add(basicCacheTTL)
}
