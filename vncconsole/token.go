package vncconsole

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ErrBadToken is returned (wrapped, with the reason) for a console token
// that is forged, malformed, expired, already used or for another System.
var ErrBadToken = errors.New("invalid console token")

// DefaultTokenTTL is how long a console token may wait to be redeemed:
// long enough for the page to open its WebSocket on a loaded machine,
// short enough that a leaked URL is worthless.
const DefaultTokenTTL = 30 * time.Second

// Grant is what a console token grants: one console of one System, for
// one Redfish session of one user.
type Grant struct {
	// Session is the Redfish session's id: the console ends with it.
	Session string `json:"sid"`
	// User is the session's user (audit log, per-user limit).
	User string `json:"usr"`
	// System is the System's Redfish id.
	System string `json:"sys"`
	// ViewOnly grants the screen without input.
	ViewOnly bool `json:"vo,omitempty"`
	// Expires is when the token can no longer be redeemed.
	Expires time.Time `json:"exp"`
	// Nonce makes every token unique, so that it is redeemed once.
	Nonce []byte `json:"n"`
}

// Tokens issues and redeems console tokens: short-lived, one-time,
// HMAC-signed grants a page puts in its WebSocket's URL instead of any
// credential. A token is redeemed once on the replica that redeems it;
// its lifetime bounds a replay on another replica (TTL).
type Tokens struct {
	key []byte
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	used map[string]time.Time // nonce -> expiry, until then
}

// NewTokens returns token handling signing with key (at least 32 bytes,
// the same on every replica); ttl 0 means [DefaultTokenTTL]; now nil
// means time.Now.
func NewTokens(key []byte, ttl time.Duration, now func() time.Time) (*Tokens, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("console token key: %d bytes, want at least 32", len(key))
	}
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Tokens{key: key, ttl: ttl, now: now, used: map[string]time.Time{}}, nil
}

// Issue returns a token for g (its Expires and Nonce are set here).
func (t *Tokens) Issue(g Grant) (string, error) {
	g.Expires = t.now().Add(t.ttl)
	g.Nonce = make([]byte, 16)
	_, _ = rand.Read(g.Nonce) // never fails (crypto/rand)
	payload, err := json.Marshal(g)
	if err != nil {
		return "", fmt.Errorf("encode console grant: %w", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(t.mac(payload)), nil
}

// Redeem checks token and returns its grant if it is genuine, unexpired,
// unused and for System system; it is then used up.
func (t *Tokens) Redeem(token, system string) (Grant, error) {
	enc := base64.RawURLEncoding
	p, s, ok := strings.Cut(token, ".")
	payload, err1 := enc.DecodeString(p)
	sig, err2 := enc.DecodeString(s)
	if !ok || err1 != nil || err2 != nil {
		return Grant{}, fmt.Errorf("%w: malformed", ErrBadToken)
	}
	if !hmac.Equal(sig, t.mac(payload)) {
		return Grant{}, fmt.Errorf("%w: bad signature", ErrBadToken)
	}
	var g Grant
	if err := json.Unmarshal(payload, &g); err != nil {
		return Grant{}, fmt.Errorf("%w: %w", ErrBadToken, err)
	}
	now := t.now()
	switch {
	case !now.Before(g.Expires):
		return Grant{}, fmt.Errorf("%w: expired at %s", ErrBadToken, g.Expires.Format(time.RFC3339))
	case g.System != system:
		return Grant{}, fmt.Errorf("%w: for System %s, not %s", ErrBadToken, g.System, system)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for n, exp := range t.used { // bounded: tokens issued within one TTL
		if !now.Before(exp) {
			delete(t.used, n)
		}
	}
	if _, ok := t.used[string(g.Nonce)]; ok {
		return Grant{}, fmt.Errorf("%w: already used", ErrBadToken)
	}
	t.used[string(g.Nonce)] = g.Expires
	return g, nil
}

func (t *Tokens) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte("console-token\x00")) // never valid as another signed thing
	m.Write(payload)
	return m.Sum(nil)
}
