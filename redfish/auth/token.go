package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalidToken is returned for a token that is malformed, forged,
// expired, revoked, or whose user or password changed since it was issued.
var ErrInvalidToken = errors.New("invalid session token")

// MinKeyLen is the minimum session signing key length in bytes.
const MinKeyLen = 32

const tokenPrefix = "rb1."

// claims is what a session token carries. It is signed, not encrypted: it
// holds nothing secret.
type claims struct {
	Session string `json:"sid"`
	User    string `json:"usr"`
	Expires int64  `json:"exp"` // unix seconds
	// Password is a fingerprint of the user's password hash when the token was
	// issued: a password change invalidates the user's sessions.
	Password string `json:"pwf"`
}

// signer issues and checks tokens with a key shared by all replicas.
type signer struct{ key []byte }

func newSigner(key []byte) (signer, error) {
	if len(key) < MinKeyLen {
		return signer{}, fmt.Errorf("session key: %d bytes, want at least %d", len(key), MinKeyLen)
	}
	return signer{key: key}, nil
}

func (s signer) mac(payload string) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(tokenPrefix + payload))
	return h.Sum(nil)
}

func (s signer) sign(c claims) (string, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode session claims: %w", err)
	}
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return tokenPrefix + payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload)), nil
}

// verify checks the signature and expiry; the caller checks the rest.
func (s signer) verify(token string, now time.Time) (claims, error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return claims{}, fmt.Errorf("%w: unknown format", ErrInvalidToken)
	}
	payload, sig, ok := strings.Cut(rest, ".")
	if !ok {
		return claims{}, fmt.Errorf("%w: no signature", ErrInvalidToken)
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return claims{}, fmt.Errorf("%w: bad signature", ErrInvalidToken)
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return claims{}, fmt.Errorf("%w: payload: %w", ErrInvalidToken, err)
	}
	var c claims
	if err := json.Unmarshal(raw, &c); err != nil {
		return claims{}, fmt.Errorf("%w: payload: %w", ErrInvalidToken, err)
	}
	if !now.Before(time.Unix(c.Expires, 0)) {
		return claims{}, fmt.Errorf("%w: expired", ErrInvalidToken)
	}
	return c, nil
}

// fingerprint identifies a password hash without revealing it (keyed, so it
// is useless outside this service).
func (s signer) fingerprint(hash []byte) string {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte("pw\x00"))
	h.Write(hash)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// newSessionID returns a random, URL-safe session id.
func newSessionID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
