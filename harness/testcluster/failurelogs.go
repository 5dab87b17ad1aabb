package testcluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A failed test's log tails: what the cluster's processes logged while the
// test ran, kept to the lines about its namespaces and bounded, so that a
// test on a shared cluster that fails once in CI shows virt-controller's
// side of it.
const (
	// failureLogLines bounds each tail a failed test gets.
	failureLogLines = 200
	// failureLogLineBytes cuts longer lines in a tail.
	failureLogLineBytes = 2000
)

// failureLogs is the cluster's record of [Cluster.LogsOnFailure].
type failureLogs struct {
	mu sync.Mutex
	// namespaces are every namespace a test registered: a line naming one
	// of them belongs to that test.
	namespaces map[string]bool
	// watches are the registrations of running tests, by test name.
	watches map[string]*logWatch
	// printed names the tests whose tails were logged.
	printed []string
}

// logWatch is one test's registration: where each log ended when it
// began, and its namespaces.
type logWatch struct {
	start      map[string]int64 // log name -> size at the start
	namespaces []string
}

// LogsOnFailure makes a failure of t show what the cluster's processes
// (etcd, kube-apiserver, virt-controller, virt-api) logged while t ran:
// when t has failed, its cleanup logs for each process the lines written
// since the first call for t that concern namespaces, the last 200 of
// them (longer lines cut). Without namespaces every line is kept; with
// them see [logFilter]. More calls for t add namespaces.
//
// [Cluster.TestNamespace] calls it for its namespace; [Shared] and
// [ForTest] call it (without namespaces) for the test that called them, as
// a fallback that stays quiet when that test or one of its subtests
// already logged tails.
func (c *Cluster) LogsOnFailure(t testing.TB, namespaces ...string) {
	t.Helper()
	fl := &c.failureLogs
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.namespaces == nil {
		fl.namespaces, fl.watches = map[string]bool{}, map[string]*logWatch{}
	}
	for _, ns := range namespaces {
		fl.namespaces[ns] = true
	}
	if w := fl.watches[t.Name()]; w != nil {
		w.namespaces = append(w.namespaces, namespaces...)
		return
	}
	w := &logWatch{start: c.logSizes(), namespaces: slices.Clone(namespaces)}
	fl.watches[t.Name()] = w
	t.Cleanup(func() {
		fl.mu.Lock()
		delete(fl.watches, t.Name())
		fl.mu.Unlock()
		if t.Failed() {
			c.logTailsSince(t, w)
		}
	})
}

// fallbackLogsOnFailure is [Cluster.LogsOnFailure] without namespaces for
// a test that may leave the tails to its subtests: it logs nothing when t
// or a subtest already did, or when t registered namespaces itself. start
// is where each log stood when t started (nil: t started the cluster, so
// the whole logs).
func (c *Cluster) fallbackLogsOnFailure(t testing.TB, start map[string]int64) {
	fl := &c.failureLogs
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		fl.mu.Lock()
		quiet := fl.watches[t.Name()] != nil || fl.printedWithin(t.Name())
		fl.mu.Unlock()
		if !quiet {
			c.logTailsSince(t, &logWatch{start: start})
		}
	})
}

// printedWithin reports whether tails were logged for test or a subtest of
// it. fl.mu is held.
func (fl *failureLogs) printedWithin(test string) bool {
	return slices.ContainsFunc(fl.printed, func(p string) bool {
		return p == test || strings.HasPrefix(p, test+"/")
	})
}

// logNames are the processes whose logs a failed test gets, in the order
// it gets them.
func (c *Cluster) logNames() []string {
	names := []string{etcdBinary, apiserverBinary}
	if c.virtController {
		names = append(names, virtControllerBinary)
	}
	if c.virtAPI {
		names = append(names, virtAPIBinary)
	}
	return names
}

// logPath is where process name logs (startProcess; a restarted process
// appends to the same file).
func (c *Cluster) logPath(name string) string { return filepath.Join(c.Dir, name+".log") }

// logSizes returns how long each log is now (0 for one not written yet).
func (c *Cluster) logSizes() map[string]int64 {
	sizes := map[string]int64{}
	for _, name := range c.logNames() {
		if fi, err := os.Stat(c.logPath(name)); err == nil {
			sizes[name] = fi.Size()
		}
	}
	return sizes
}

// logTailsSince logs, for each process, the tail of what it logged since
// w started, filtered to w's namespaces.
func (c *Cluster) logTailsSince(t testing.TB, w *logWatch) {
	fl := &c.failureLogs
	fl.mu.Lock()
	fl.printed = append(fl.printed, t.Name())
	f := newLogFilter(w.namespaces, fl.namespaces)
	fl.mu.Unlock()
	for _, name := range c.logNames() {
		data, err := readFrom(c.logPath(name), w.start[name])
		if err != nil {
			t.Logf("%s log: %v", name, err)
			continue
		}
		lines, total := f.tail(data, failureLogLines)
		t.Logf("%s log since %s started, %s: %d of %d lines%s", name, t.Name(), f, len(lines), total, formatTail(lines))
	}
}

// readFrom reads the file at path from offset on (from the start if it is
// shorter now).
func readFrom(path string, offset int64) ([]byte, error) {
	f, err := os.Open(path) // a log in the cluster's own directory
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	defer f.Close() // read only
	if fi, err := f.Stat(); err == nil && fi.Size() < offset {
		offset = 0
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seek %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// formatTail is the tail as the rest of a log message: nothing, or a colon
// and one line each.
func formatTail(lines [][]byte) string {
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(":")
	for _, l := range lines {
		b.WriteString("\n")
		if len(l) > failureLogLineBytes {
			fmt.Fprintf(&b, "%s... (%d bytes)", l[:failureLogLineBytes], len(l))
			continue
		}
		b.Write(l)
	}
	return b.String()
}

// logFilter keeps the lines of a log that concern a test's namespaces
// (ours) among the namespaces every test registered (known):
//
//   - a JSON line (virt-controller, virt-api) whose "namespace" field is a
//     known namespace is kept when it is one of ours;
//   - any other line is kept when a word of it (a run of letters, digits
//     and '-': "p19/onoff", namespace="p19", \"p19\") is one of ours, or
//     when none is another known namespace: lines about the cluster itself
//     (restarts, leader election, panics, etcd's slow requests) stay.
//
// Without namespaces of its own it keeps every line.
type logFilter struct {
	ours, others map[string]bool
}

func newLogFilter(ours []string, known map[string]bool) logFilter {
	f := logFilter{ours: map[string]bool{}, others: map[string]bool{}}
	for _, ns := range ours {
		f.ours[ns] = true
	}
	for ns := range known {
		if !f.ours[ns] {
			f.others[ns] = true
		}
	}
	return f
}

func (f logFilter) String() string {
	if len(f.ours) == 0 {
		return "every line"
	}
	return fmt.Sprintf("lines for namespace %s or none other", strings.Join(slices.Sorted(maps.Keys(f.ours)), ", "))
}

// tail returns the last n lines of data that f keeps and how many it kept.
func (f logFilter) tail(data []byte, n int) (lines [][]byte, total int) {
	for l := range bytes.SplitSeq(bytes.TrimRight(data, "\n"), []byte("\n")) {
		if len(l) == 0 || !f.keep(l) {
			continue
		}
		total++
		lines = append(lines, l)
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return lines, total
}

func (f logFilter) keep(line []byte) bool {
	if len(f.ours) == 0 {
		return true
	}
	if ns := jsonNamespace(line); f.ours[ns] || f.others[ns] {
		return f.ours[ns]
	}
	other := false
	for _, w := range bytes.FieldsFunc(line, notDNSLabelByte) {
		if f.ours[string(w)] {
			return true
		}
		other = other || f.others[string(w)]
	}
	return !other
}

// jsonNamespace is the "namespace" field of a JSON log line ("" for none).
func jsonNamespace(line []byte) string {
	if len(line) == 0 || line[0] != '{' {
		return ""
	}
	var l struct {
		Namespace string `json:"namespace"`
	}
	if json.Unmarshal(line, &l) != nil {
		return ""
	}
	return l.Namespace
}

func notDNSLabelByte(r rune) bool {
	return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-'
}
