package logctx

import (
	"context"
	"log/slog"
)

type key struct{}

// discard is what [From] answers for a context without a logger.
var discard = slog.New(slog.DiscardHandler)

// Into returns ctx carrying log.
func Into(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, key{}, log)
}

// From is the logger ctx carries, or one that discards when it carries
// none (or a nil one).
func From(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(key{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return discard
}
