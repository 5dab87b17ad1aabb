package testutil

import (
	"fmt"
	"testing"
)

// outcome records what Missing did to a test, without ending the caller.
type outcome struct {
	testing.TB
	failed, skipped string
}

func (o *outcome) Helper()                           {}
func (o *outcome) Fatalf(format string, args ...any) { o.failed = fmt.Sprintf(format, args...) }
func (o *outcome) Skipf(format string, args ...any)  { o.skipped = fmt.Sprintf(format, args...) }

// TestMissing: a missing prerequisite skips the test, and fails it under
// CI=true.
func TestMissing(t *testing.T) {
	for _, tt := range []struct {
		ci       string
		wantFail bool
	}{{"", false}, {"false", false}, {"true", true}} {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			o := &outcome{TB: t}
			Missing(o, "no %s", "thing")
			if failed := o.failed != ""; failed != tt.wantFail || failed == (o.skipped != "") {
				t.Errorf("failed %q, skipped %q; want failed=%v", o.failed, o.skipped, tt.wantFail)
			}
		})
	}
}
