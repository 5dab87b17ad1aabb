package e2e

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// TestRedfishtool drives the bridge over HTTPS with DMTF's redfishtool
// CLI, with Basic and with session auth: list the systems, power a VM on
// and off, and check that the VM really runs (and stops) in the cluster.
func TestRedfishtool(t *testing.T) {
	tool, err := exec.LookPath("redfishtool")
	if err != nil {
		testutil.Missing(t, "redfishtool not installed")
	}
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		host := strings.TrimPrefix(env.URL, "https://")
		for _, authn := range []string{"Basic", "Session"} {
			t.Run(authn, func(t *testing.T) {
				run := func(args ...string) map[string]any {
					t.Helper()
					base := []string{"-r", host, "-u", env.User, "-p", env.Password, "-S", "Always", "-A", authn}
					start := time.Now()
					cmd := clientCommand(t, tool, append(base, args...)...)
					cmd.Env = pythonEnviron()
					var stderr strings.Builder
					cmd.Stderr = &stderr
					out, err := cmd.Output()
					if err != nil {
						t.Fatalf("redfishtool %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
					}
					t.Logf("TIMING redfishtool -A %s %s: %s", authn, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
					var doc map[string]any
					if len(strings.TrimSpace(string(out))) > 0 {
						if err := json.Unmarshal(out, &doc); err != nil {
							t.Fatalf("redfishtool %s: output %q: %v", strings.Join(args, " "), out, err)
						}
					}
					return doc
				}
				coll := run("Systems")
				var ids []string
				members, _ := coll["Members"].([]any)
				for _, m := range members {
					id, _ := m.(map[string]any)["@odata.id"].(string)
					ids = append(ids, strings.TrimPrefix(id, "/redfish/v1/Systems/"))
				}
				for i := range numVMs {
					if !slices.Contains(ids, sysID(i)) {
						t.Errorf("Systems collection %v lacks %s", ids, sysID(i))
					}
				}
				if n, _ := coll["Members@odata.count"].(float64); int(n) != len(members) {
					t.Errorf("Members@odata.count %v, %d members", coll["Members@odata.count"], len(members))
				}

				id := sysID(vmRedfishtool)
				run("Systems", "-I", id, "reset", "On")
				vmi := a.waitRunning(t, vmRedfishtool)
				t.Logf("%s running as VMI %s", id, vmi.GetUID())
				waitFor(t, id+" PowerState On over Redfish", func() (bool, string) {
					got := run("Systems", "-I", id, "get")["PowerState"]
					return got == "On", "PowerState " + asString(got)
				})

				run("Systems", "-I", id, "reset", "ForceOff")
				waitFor(t, vmName(vmRedfishtool)+" VMI gone", func() (bool, string) {
					vmi := a.vmi(t.Context(), t, vmRedfishtool)
					return vmi == nil, "phase " + phase(vmi)
				})
				if got := run("Systems", "-I", id, "get")["PowerState"]; got != "Off" {
					t.Errorf("%s PowerState %v after ForceOff and the VMI gone, want Off", id, got)
				}
			})
		}
	})
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
