package testcluster

import (
	"bytes"
	"log/slog"
	"slices"
	"sync"
	"testing"
)

// LoggerForTest is a logger for what a test runs beside the cluster (the
// simulator, a reconciler): records at Warn and above go to t's output at
// once; every record, Debug included, is also kept, the last 200, and
// logged as "<name> log" when t has failed, like the cluster's own logs
// ([Cluster.LogsOnFailure]).
func LoggerForTest(t testing.TB, name string) *slog.Logger {
	t.Helper()
	kept := &lastLines{max: failureLogLines}
	t.Cleanup(func() {
		if t.Failed() {
			lines, total := kept.get()
			t.Logf("%s log (every level) since %s started: %d of %d lines%s", name, t.Name(), len(lines), total, formatTail(lines))
		}
	})
	return slog.New(slog.NewMultiHandler(
		slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}),
		slog.NewTextHandler(kept, &slog.HandlerOptions{Level: slog.LevelDebug}),
	))
}

// lastLines is an io.Writer that keeps the last max lines written to it.
type lastLines struct {
	mu      sync.Mutex
	max     int
	lines   [][]byte
	total   int
	partial []byte // a line not ended yet
}

func (l *lastLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rest := append(l.partial, p...)
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		l.total++
		l.lines = append(l.lines, bytes.Clone(rest[:i]))
		if len(l.lines) > l.max {
			l.lines = l.lines[1:]
		}
		rest = rest[i+1:]
	}
	l.partial = bytes.Clone(rest)
	return len(p), nil
}

// get returns the kept lines and how many were written in all.
func (l *lastLines) get() (lines [][]byte, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines), l.total
}
