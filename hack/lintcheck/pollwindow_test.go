package lintcheck

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pollCall matches a call of apimachinery's wait.Poll family (Poll,
// PollImmediate, PollUntilContextTimeout, PollInfinite, ...).
var pollCall = regexp.MustCompile(`\bwait\.Poll[A-Za-z]*\(`)

// inTests reports whether path holds test code: a _test.go file or the
// harness wing.
func inTests(path string) bool {
	return strings.HasSuffix(path, "_test.go") || strings.Contains(filepath.ToSlash(path), "/harness/")
}

// TestNoPollWindows fails for every wait.Poll* call in test code: a poll
// whose window decides a result fails on a loaded machine. Tests wait on
// events, or bound a wait with testutil.Eventually's failure guard.
func TestNoPollWindows(t *testing.T) {
	t.Run("control", func(t *testing.T) {
		if !pollCall.MatchString("err := wait." + "PollUntilContextTimeout(ctx, time.Second, 10*time.Second, true, f)") {
			t.Error("a wait.PollUntilContextTimeout call not matched")
		}
		if pollCall.MatchString("// waits like wait." + "Poll would, on events") {
			t.Error("a mention without a call matched")
		}
	})
	eachGoLine(t, filepath.Join("..", ".."), func(path string, n int, line string) {
		if inTests(path) && pollCall.MatchString(line) {
			t.Errorf("%s:%d: a wait.Poll window in test code: wait on an event instead", path, n)
		}
	})
}
