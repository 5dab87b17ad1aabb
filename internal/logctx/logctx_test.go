package logctx

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestFromInto(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil)).With("request", "r1")
	ctx := Into(t.Context(), log)
	From(ctx).Info("hello")
	if got := buf.String(); !strings.Contains(got, "request=r1") || !strings.Contains(got, "msg=hello") {
		t.Errorf("From(Into(ctx, log)) did not log through log: %q", got)
	}
}

// TestFromFallsBackToRoot: a context without a logger (or with a nil one)
// logs through the root logger, slog.Default (main's), not nowhere.
func TestFromFallsBackToRoot(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	From(t.Context()).Info("no logger")
	From(Into(t.Context(), nil)).Info("nil logger")
	out := buf.String()
	for _, want := range []string{"msg=\"no logger\"", "msg=\"nil logger\""} {
		if !strings.Contains(out, want) {
			t.Errorf("the root logger did not get %s: %q", want, out)
		}
	}
}

// countingHandler counts WithAttrs calls (the formatting With defers).
type countingHandler struct {
	slog.Handler
	withAttrs *int
}

func (h countingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	*h.withAttrs++
	return countingHandler{Handler: h.Handler.WithAttrs(attrs), withAttrs: h.withAttrs}
}

// TestWith: the attributes are on every line, and in derived loggers, but
// the handler formats them only once a line is written.
func TestWith(t *testing.T) {
	var buf bytes.Buffer
	var n int
	base := slog.New(countingHandler{Handler: slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}), withAttrs: &n})
	log := With(base, slog.String("request", "r1"))
	log.Debug("not written")
	if n != 0 || buf.Len() != 0 {
		t.Fatalf("a line below the level formatted the attributes %d times, wrote %q", n, buf.String())
	}
	log.Info("one", "k", "v")
	log.With("sub", "x").WithGroup("g").Info("two", "k", "w")
	out := buf.String()
	for _, want := range []string{"request=r1 k=v", "request=r1 sub=x g.k=w"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q: %q", want, out)
		}
	}
	if n != 2 { // the request's attributes once, then "sub"
		t.Errorf("WithAttrs called %d times, want 2", n)
	}
}
