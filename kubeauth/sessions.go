package kubeauth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// Open sessions share the revocations ConfigMap (the one object the
// bridge's Role lets it write for sessions): key "open.<session id>",
// value "<RFC 3339 expiry> <user>". A login adds its key by a merge patch
// of that key, a logout removes it in the patch that revokes the session,
// and expired ones are pruned with any write, like revocations. Open and
// revoked entries count together against [MaxRevocations], and each
// against its user's [MaxRecordsPerUser].

// openPrefix starts the key of an open session.
const openPrefix = "open."

func openKey(id string) string { return openPrefix + id }

// entryExpiry is the expiry an entry's value starts with.
func entryExpiry(v string) (time.Time, error) {
	first, _, _ := strings.Cut(v, " ")
	return time.Parse(time.RFC3339, first)
}

// entryUser is the user an entry's value names after its expiry ("" for
// a revocation written before revocations named their user).
func entryUser(v string) string {
	_, user, _ := strings.Cut(v, " ")
	return user
}

// entryValue is the value of s's entry, open or revoked: its expiry and
// its user.
func entryValue(s auth.Session) string {
	return s.Expires.UTC().Format(time.RFC3339) + " " + s.User
}

// Opened implements auth.Sessions: the session is listed here at once and
// on every replica once the ConfigMap has it. A login the ConfigMap cannot
// take fails (auth.Authenticator.Login).
func (r *ConfigMapRevocations) Opened(ctx context.Context, s auth.Session) error {
	if err := r.write(ctx, map[string]any{openKey(s.ID): entryValue(s)}, s.User); errors.Is(err, ErrRevocationsFull) {
		return fmt.Errorf("record session: %w: %w", auth.ErrSessionLimit, err)
	} else if err != nil {
		return fmt.Errorf("record session: %w", err)
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, o := range r.opened {
		if !o.Expires.After(now) {
			delete(r.opened, id)
		}
	}
	r.opened[s.ID] = s
	return nil
}

// Open implements auth.Sessions: the open entries of the ConfigMap and of
// this replica's logins, less the revoked ones.
func (r *ConfigMapRevocations) Open(_ context.Context) ([]auth.Session, error) {
	now := r.now()
	found := map[string]auth.Session{}
	revoked := map[string]bool{}
	cm, err := r.lister.ConfigMaps(r.namespace).Get(r.name)
	switch {
	case err == nil:
		for k, v := range cm.Data {
			id, open := strings.CutPrefix(k, openPrefix)
			if !open {
				revoked[k] = true
				continue
			}
			t, err := entryExpiry(v)
			_, user, _ := strings.Cut(v, " ")
			if err == nil && t.After(now) && user != "" {
				found[id] = auth.Session{ID: id, User: user, Expires: t}
			}
		}
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("read open sessions: %w", err)
	}
	r.mu.Lock()
	for id, s := range r.opened {
		if s.Expires.After(now) {
			found[id] = s
		}
	}
	for id := range r.local {
		revoked[id] = true
	}
	r.mu.Unlock()
	out := make([]auth.Session, 0, len(found))
	for id, s := range found {
		if !revoked[id] {
			out = append(out, s)
		}
	}
	return out, nil
}
