package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// IPMIPassword is the user's IPMI password in clear (the Secret's
	// key <user>.ipmi; nil: no IPMI login). IPMI v2.0's RAKP keys its
	// HMACs with the password itself (K_UID), so a hash cannot serve it:
	// it is a separate password, at most 20 bytes, so that the Redfish
	// password stays a bcrypt hash only.
	IPMIPassword []byte
	// ReadOnly users read what their scope allows and change nothing
	// (the Secret's key <user>.role set to [RoleReadOnly]).
	ReadOnly bool
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
	// SuffixIPMIPassword holds the user's IPMI password in clear.
	SuffixIPMIPassword = ".ipmi"
	// MaxIPMIPassword is the longest IPMI v2.0 password.
	MaxIPMIPassword = 20
	// SuffixRole holds the user's role; [RoleReadOnly] is the one value.
	SuffixRole = ".role"
	// RoleReadOnly makes a user ReadOnly: it reads, and writes nothing.
	RoleReadOnly = "ReadOnly"
)

// ParseSecretData reads users from a Secret's data:
//
//	<user>             bcrypt hash of the password
//	<user>.namespaces  comma-separated namespaces, or "*" for all (required)
//	<user>.selector    optional label selector on VMs, e.g. "team=a,env!=prod"
//	<user>.ipmi        optional IPMI password in clear (1-20 bytes)
//	<user>.role        optional role: "ReadOnly" (reads only)
//
// Without a role a user is an Operator of its scope (an Administrator when
// its scope is every System); a role other than ReadOnly rejects the user.
// User names therefore cannot contain '.'. A malformed entry (a hash that
// is not bcrypt, no or empty namespaces, a bad selector, scope keys without
// a hash) rejects that user only: the users returned are the well-formed
// ones, and the error joins one error per rejected entry. A user without
// namespaces is rejected rather than a user who silently sees nothing.
func ParseSecretData(data map[string][]byte) (StaticUsers, error) {
	users := StaticUsers{}
	var errs []error
	for key, val := range data {
		if strings.Contains(key, ".") {
			continue
		}
		u, err := parseUser(key, val, data)
		if err != nil {
			errs = append(errs, fmt.Errorf("user %q rejected: %w", key, err))
			continue
		}
		users[key] = u
	}
	for key := range data {
		base, _, ok := strings.Cut(key, ".")
		if _, hashed := data[base]; ok && !hashed {
			errs = append(errs, fmt.Errorf("key %q ignored: no password hash under key %q", key, base))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return users, errors.Join(errs...)
}

// parseUser reads user name's entry (its hash is hash) from data.
func parseUser(name string, hash []byte, data map[string][]byte) (User, error) {
	if _, err := bcrypt.Cost(hash); err != nil {
		return User{}, fmt.Errorf("password hash: %w", err)
	}
	u := User{Name: name, PasswordHash: hash}
	ns, ok := data[name+SuffixNamespaces]
	if !ok {
		return User{}, fmt.Errorf("missing key %q", name+SuffixNamespaces)
	}
	for _, n := range strings.Split(string(ns), ",") {
		if n = strings.TrimSpace(n); n != "" {
			u.Scope.Namespaces = append(u.Scope.Namespaces, n)
		}
	}
	if len(u.Scope.Namespaces) == 0 {
		return User{}, fmt.Errorf("%q is empty", name+SuffixNamespaces)
	}
	if sel, ok := data[name+SuffixSelector]; ok && strings.TrimSpace(string(sel)) != "" {
		s, err := labels.Parse(string(sel))
		if err != nil {
			return User{}, fmt.Errorf("selector: %w", err)
		}
		u.Scope.Selector = s
	}
	if pw, ok := data[name+SuffixIPMIPassword]; ok {
		if len(pw) == 0 || len(pw) > MaxIPMIPassword {
			return User{}, fmt.Errorf("%q: an IPMI password has 1 to %d bytes, not %d", name+SuffixIPMIPassword, MaxIPMIPassword, len(pw))
		}
		u.IPMIPassword = pw
	}
	if role, ok := data[name+SuffixRole]; ok {
		if r := strings.TrimSpace(string(role)); r != RoleReadOnly {
			return User{}, fmt.Errorf("%q is %q: the one role a user may be given is %q", name+SuffixRole, r, RoleReadOnly)
		}
		u.ReadOnly = true
	}
	return u, nil
}
