package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"k8s.io/apimachinery/pkg/labels"
)

// ErrNoSuchUser is returned by [Users.Lookup] for an unknown user name.
var ErrNoSuchUser = errors.New("no such user")

// User is one account allowed to use the service.
type User struct {
	Name string
	// PasswordHash is a bcrypt hash ($2a$/$2b$/$2y$).
	PasswordHash []byte
	Scope        Scope
}

// Users is the source of accounts. It is consulted on every request, so a
// removed user or a changed password takes effect at once (sessions of a
// user whose hash changed stop validating).
type Users interface {
	// Lookup returns the user called name, or an error wrapping ErrNoSuchUser.
	Lookup(ctx context.Context, name string) (User, error)
}

// StaticUsers is a fixed in-memory [Users], keyed by user name.
type StaticUsers map[string]User

// Lookup implements [Users].
func (s StaticUsers) Lookup(_ context.Context, name string) (User, error) {
	u, ok := s[name]
	if !ok {
		return User{}, fmt.Errorf("user %q: %w", name, ErrNoSuchUser)
	}
	return u, nil
}

// Secret data key suffixes for [ParseSecretData].
const (
	SuffixNamespaces = ".namespaces"
	SuffixSelector   = ".selector"
)

// ParseSecretData reads users from a Secret's data:
//
//	<user>             bcrypt hash of the password
//	<user>.namespaces  comma-separated namespaces, or "*" for all (required)
//	<user>.selector    optional label selector on VMs, e.g. "team=a,env!=prod"
//
// User names therefore cannot contain '.'. A user without namespaces is an
// error rather than a user who silently sees nothing.
func ParseSecretData(data map[string][]byte) (StaticUsers, error) {
	users := StaticUsers{}
	for key, val := range data {
		if strings.Contains(key, ".") {
			continue
		}
		if _, err := bcrypt.Cost(val); err != nil {
			return nil, fmt.Errorf("user %q: password hash: %w", key, err)
		}
		u := User{Name: key, PasswordHash: val}
		ns, ok := data[key+SuffixNamespaces]
		if !ok {
			return nil, fmt.Errorf("user %q: missing key %q", key, key+SuffixNamespaces)
		}
		for _, n := range strings.Split(string(ns), ",") {
			if n = strings.TrimSpace(n); n != "" {
				u.Scope.Namespaces = append(u.Scope.Namespaces, n)
			}
		}
		if len(u.Scope.Namespaces) == 0 {
			return nil, fmt.Errorf("user %q: %q is empty", key, key+SuffixNamespaces)
		}
		if sel, ok := data[key+SuffixSelector]; ok && strings.TrimSpace(string(sel)) != "" {
			s, err := labels.Parse(string(sel))
			if err != nil {
				return nil, fmt.Errorf("user %q: selector: %w", key, err)
			}
			u.Scope.Selector = s
		}
		users[key] = u
	}
	for key := range data {
		base, _, ok := strings.Cut(key, ".")
		if _, known := users[base]; ok && !known {
			return nil, fmt.Errorf("key %q: no password hash under key %q", key, base)
		}
	}
	return users, nil
}
