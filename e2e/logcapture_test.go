package e2e

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
)

// capturedLogs holds every log record of the demo envs (bridge and
// simulator, every level), so a test can search what was logged.
var capturedLogs = &logCapture{}

type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// captureHandler records every record as text into capturedLogs and passes
// those the shown handler wants on to it.
type captureHandler struct {
	shown slog.Handler
	text  slog.Handler
}

func newCaptureHandler(shown slog.Handler) slog.Handler {
	return &captureHandler{shown: shown, text: slog.NewTextHandler(capturedLogs, &slog.HandlerOptions{Level: slog.LevelDebug})}
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.text.Handle(ctx, r.Clone())
	if h.shown.Enabled(ctx, r.Level) {
		err = h.shown.Handle(ctx, r)
	}
	return err
}

func (h *captureHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &captureHandler{shown: h.shown.WithAttrs(attrs), text: h.text.WithAttrs(attrs)}
}

func (h *captureHandler) WithGroup(name string) slog.Handler {
	return &captureHandler{shown: h.shown.WithGroup(name), text: h.text.WithGroup(name)}
}
