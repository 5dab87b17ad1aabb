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
	buf.Reset()
	From(t.Context()).Info("nowhere")
	From(Into(t.Context(), nil)).Info("nowhere")
	if buf.Len() != 0 {
		t.Errorf("a context without a logger logged through another one: %q", buf.String())
	}
}
