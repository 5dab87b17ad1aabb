package kubeauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/redfish/auth"
)

// A session's open entry holds its end by inactivity; auth.Authenticator
// pushes it back as the session is used, at most once per tenth of the
// timeout (redfish/auth/activity.go), with [ConfigMapRevocations.Touch].
// A touch is a JSON patch of the one key: it applies to the ConfigMap as
// etcd holds it (no resourceVersion, so it never conflicts with other
// replicas' writes of other keys), and its "test" of the key's value makes
// it fail if the key is gone, so a touch racing a logout never brings the
// ended session back.

// Lookup implements auth.Sessions: the session's open entry, the later of
// the cache's and this replica's own (its logins and touches). An entry
// missing, or expired by now, is looked up again once the cache is
// confirmed current after the call began (fresh.go): a login or a touch
// on another replica that answered before this call is then seen.
func (r *ConfigMapRevocations) Lookup(ctx context.Context, id string, now time.Time) (auth.Session, bool, error) {
	began := time.Now()
	if s, ok := r.session(id); ok && s.Expires.After(now) {
		return s, true, nil
	}
	if r.isEnded(id) {
		return auth.Session{}, false, nil
	}
	if err := r.confirmAfter(ctx, began); err != nil {
		return auth.Session{}, false, err
	}
	s, ok := r.session(id)
	if !ok || !s.Expires.After(now) {
		r.markEnded(id)
	}
	return s, ok, nil
}

// maxEnded bounds the sessions remembered as ended.
const maxEnded = 10000

// isEnded reports whether session id was found ended (missing or expired
// in a confirmed view) before: a session never opens again, so a client
// replaying its dead token costs no further quorum read.
func (r *ConfigMapRevocations) isEnded(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.ended[id]
	return ok
}

func (r *ConfigMapRevocations) markEnded(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended == nil || len(r.ended) >= maxEnded {
		r.ended = map[string]struct{}{} // forgotten ones cost a read again
	}
	r.ended[id] = struct{}{}
}

// session is id's open entry as this replica knows it.
func (r *ConfigMapRevocations) session(id string) (auth.Session, bool) {
	r.mu.Lock()
	own, mine := r.opened[id]
	_, revoked := r.local[id]
	r.mu.Unlock()
	if revoked {
		return auth.Session{}, false
	}
	var s auth.Session
	found := false
	if cm, err := r.lister.ConfigMaps(r.namespace).Get(r.name); err == nil {
		if v, ok := cm.Data[openKey(id)]; ok {
			if t, err := entryExpiry(v); err == nil {
				s, found = auth.Session{ID: id, User: entryUser(v), Expires: t}, true
			}
		}
	}
	if mine && (!found || own.Expires.After(s.Expires)) {
		s, found = own, true
	}
	return s, found
}

// Touch implements auth.Sessions. The patch tests the entry's value as
// this replica last saw it (JSON patch "test", then "replace"): a
// "replace" alone would record an entry a logout had just removed. When
// the test fails (another replica touched it, or it is gone), the cache
// is confirmed current and the touch is tried again on what it then
// shows, a few times.
func (r *ConfigMapRevocations) Touch(ctx context.Context, s auth.Session) error {
	for range touchTries {
		began := time.Now()
		old, ok := r.session(s.ID)
		if !ok {
			if err := r.confirmAfter(ctx, began); err != nil {
				return fmt.Errorf("touch session %s: %w", s.ID, err)
			}
			if old, ok = r.session(s.ID); !ok {
				return fmt.Errorf("touch session %s: %w", s.ID, auth.ErrNoSuchSession)
			}
		}
		err := r.replace(ctx, openKey(s.ID), entryValue(old), entryValue(s))
		if err == nil {
			r.touched(s)
			return nil
		}
		if !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) && !isUnprocessable(err) {
			return fmt.Errorf("touch session %s in %s/%s: %w", s.ID, r.namespace, r.name, err)
		}
		// Changed or gone since this replica saw it: look again in a view
		// confirmed after the failed patch.
		if err := r.confirmAfter(ctx, time.Now()); err != nil {
			return fmt.Errorf("touch session %s: %w", s.ID, err)
		}
	}
	return fmt.Errorf("touch session %s in %s/%s: the entry changed under %d tries", s.ID, r.namespace, r.name, touchTries)
}

// touchTries bounds the tries of a touch whose entry other replicas keep
// changing.
const touchTries = 3

// replace sets key from old to value by a JSON patch that fails unless
// key holds old.
func (r *ConfigMapRevocations) replace(ctx context.Context, key, old, value string) error {
	path := "/data/" + escapePointer(key)
	patch, err := json.Marshal([]map[string]string{
		{"op": "test", "path": path, "value": old},
		{"op": "replace", "path": path, "value": value},
	})
	if err != nil {
		return fmt.Errorf("encode session touch: %w", err)
	}
	_, err = r.kube.CoreV1().ConfigMaps(r.namespace).Patch(ctx, r.name, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: "redfish-sessions"})
	return err // Touch wraps it
}

// touched records this replica's touch of s until the cache shows it.
func (r *ConfigMapRevocations) touched(s auth.Session) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, revoked := r.local[s.ID]; revoked {
		return
	}
	for id, o := range r.opened {
		if !o.Expires.After(now) {
			delete(r.opened, id)
		}
	}
	r.opened[s.ID] = s
}

// isUnprocessable reports a 422 (a JSON patch whose "replace" found no
// key).
func isUnprocessable(err error) bool {
	var st *apierrors.StatusError
	return errors.As(err, &st) && st.ErrStatus.Code == http.StatusUnprocessableEntity
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
