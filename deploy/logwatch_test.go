package deploy

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// forbiddenSeen records every error the bridge logged that an apiserver
// refused with 403: the bridge retries most calls, so a missing grant shows
// up in its logs, not always in its Redfish answers.
type forbiddenSeen struct {
	mu   sync.Mutex
	msgs []string
}

func (f *forbiddenSeen) note(s string) {
	if strings.Contains(s, "is forbidden") {
		f.mu.Lock()
		f.msgs = append(f.msgs, s)
		f.mu.Unlock()
	}
}

func (f *forbiddenSeen) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.msgs...)
}

// watchForbidden returns a logger for the bridge (warnings to the test
// output) and a record of the Forbidden errors it and client-go's
// HandleError (informers, reconcilers) report until the test ends.
func watchForbidden(t *testing.T) (*slog.Logger, *forbiddenSeen) {
	t.Helper()
	f := &forbiddenSeen{}
	prev := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = append(append([]utilruntime.ErrorHandler(nil), prev...),
		func(_ context.Context, err error, msg string, _ ...any) { f.note(msg + ": " + err.Error()) })
	t.Cleanup(func() { utilruntime.ErrorHandlers = prev })
	h := &noteHandler{Handler: slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}), f: f}
	return slog.New(h), f
}

// noteHandler passes records on and notes those mentioning a 403, at every
// level.
type noteHandler struct {
	slog.Handler
	f *forbiddenSeen
}

func (h *noteHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *noteHandler) Handle(ctx context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	h.f.note(b.String())
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *noteHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &noteHandler{Handler: h.Handler.WithAttrs(as), f: h.f}
}

func (h *noteHandler) WithGroup(name string) slog.Handler {
	return &noteHandler{Handler: h.Handler.WithGroup(name), f: h.f}
}

func TestWatchForbidden(t *testing.T) {
	log, f := watchForbidden(t)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("no grant"))
	utilruntime.HandleError(forbidden)
	utilruntime.HandleError(apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p"))
	log.Debug("media reconcile", "err", forbidden)
	log.With("vm", "a/b").Info("fine")
	if got := len(f.seen()); got != 2 {
		t.Errorf("noted %d Forbidden errors, want 2: %q", got, f.seen())
	}
}
