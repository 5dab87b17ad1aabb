package redfish

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestSushyConflictRetried: a Reset refused for now (an
// [ActionConflictError]) reaches sushy as an HTTPError that Ironic 39's
// power-on retry takes: status 409 and "ActionParameterValueConflict" in
// its text (ironic/drivers/modules/redfish/power.py, _set_power_state).
// Run with the host's sushy (4.3.3) and, where hack/ironic-chroot.sh built
// it, Ironic 39's own (5.13.0) in its chroot; a plain 409 ResourceInUse is
// the negative control: sushy raises it, and Ironic would not retry.
func TestSushyConflictRetried(t *testing.T) {
	pythons := map[string][]string{"host sushy": {sushyPython}}
	if root, err := exec.CommandContext(t.Context(), "../hack/ironic-chroot.sh", "path").Output(); err == nil {
		r := string(root[:len(root)-1])
		if _, err := os.Stat(r + "/usr/bin/python3"); err == nil && os.Geteuid() == 0 { // chroot needs root
			pythons["Ironic 39's sushy"] = []string{"chroot", r, "/usr/bin/python3"}
		}
	}
	if err := exec.CommandContext(t.Context(), sushyPython, "-c", "import sushy").Run(); err != nil {
		testutil.Missing(t, "python3-sushy not available (%v)", err)
	}
	script, err := os.ReadFile("testdata/sushy_conflict.py")
	if err != nil {
		t.Fatal(err)
	}
	for name, python := range pythons {
		for _, tc := range []struct {
			name string
			err  error
			want map[string]any
		}{
			{"ActionParameterValueConflict", &ActionConflictError{Parameter: "ResetType", Value: "On", Resolution: "Retry the request."},
				map[string]any{"raised": true, "status": 409.0, "ironic39_retries": true}},
			{"control: ResourceInUse", &ConflictError{Resolution: "Retry the request."},
				map[string]any{"raised": true, "status": 409.0, "ironic39_retries": false}},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t)
				e.fake.failWrites(fmt.Errorf("power on: %w", tc.err))
				srv := httptest.NewServer(e.e)
				t.Cleanup(srv.Close)
				args := append(python[1:], "-c", string(script))
				cmd := exec.CommandContext(t.Context(), python[0], args...) // fixed interpreters and script
				cmd.Env = append(os.Environ(), "RF_URL="+srv.URL, "RF_USER=alice", "RF_PASSWORD=alice-pw")
				stderr := &limitedBuffer{}
				cmd.Stderr = stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v\n%s", name, err, stderr)
				}
				var got map[string]any
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("output %q: %v", out, err)
				}
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			})
		}
	}
}
