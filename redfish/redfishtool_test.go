package redfish

import (
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestRedfishtool drives the service with DMTF's redfishtool CLI, with
// Basic and session authentication.
func TestRedfishtool(t *testing.T) {
	tool, err := exec.LookPath("redfishtool")
	if err != nil {
		testutil.Missing(t, "redfishtool not installed")
	}
	for _, authn := range []string{"Basic", "Session"} {
		t.Run(authn, func(t *testing.T) {
			e := newEnv(t)
			srv := httptest.NewServer(e.e)
			t.Cleanup(srv.Close)
			host := strings.TrimPrefix(srv.URL, "http://")
			run := func(args ...string) string {
				t.Helper()
				base := []string{"-r", host, "-u", "bob", "-p", "bob-pw", "-S", "Never", "-A", authn}
				cmd := exec.CommandContext(t.Context(), tool, append(base, args...)...)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("redfishtool %v: %v\n%s%s", args, err, out, stderr.String())
				}
				return string(out)
			}
			var sys map[string]any
			out := run("Systems", "-I", "team-b.vm3", "get")
			if err := json.Unmarshal([]byte(out), &sys); err != nil {
				t.Fatalf("Systems get: %v", err)
			}
			if sys["Id"] != "team-b.vm3" {
				t.Errorf("Systems get: Id %v", sys["Id"])
			}
			run("Systems", "-I", "team-b.vm3", "setBootOverride", "Once", "Pxe")
			run("Systems", "-I", "team-b.vm3", "reset", "GracefulRestart")
			var mgr map[string]any
			if err := json.Unmarshal([]byte(run("Managers", "-I", "team-b.vm3", "get")), &mgr); err != nil {
				t.Fatalf("Managers get: %v", err)
			}
			if mgr["ManagerType"] != "BMC" {
				t.Errorf("manager %v", mgr)
			}
			want := []string{"boot team-b.vm3 Pxe Once -", "reset team-b.vm3 GracefulRestart"}
			if diff := cmp.Diff(want, e.fake.takeCalls()); diff != "" {
				t.Errorf("backend calls (-want +got):\n%s", diff)
			}
		})
	}
}
