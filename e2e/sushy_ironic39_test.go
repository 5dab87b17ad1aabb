package e2e

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// TestSushyIronic39VirtualMedia runs the virtual-media sequence today's
// Ironic (38/39) drives through sushy 5.8 (testdata/sushy_ironic39.py) on
// three VMs at once: media through the System only, every usable slot
// ejected first (also with an empty {} body), refused inserts (NFS,
// Upload) that leave nothing behind, InsertMedia with TransferProtocolType
// and TransferMethod Stream, a Boot PATCH with only the target while
// Enabled is Once, power-on retried on 409, and a reboot whose On arrives
// while the ForceOff is in progress. Debian's sushy 4.3.3 has no
// System.virtual_media, so only 5.8 runs it.
func TestSushyIronic39VirtualMedia(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		forEachSushy(t, func(t *testing.T, lib sushyLib) {
			if lib.Dir == "" {
				t.Skipf("sushy %s: System.virtual_media arrived in a later sushy; the Ironic 21 sequence covers this one", lib.Version)
			}
			start := time.Now()
			sushyIronic39(t, lib, env, []int{vmSushy39, vmSushy39 + 1, vmSushy39 + 2})
			t.Logf("TIMING sushy %s Ironic 39 sequence (3 VMs): %s", lib.Version, time.Since(start).Round(time.Millisecond))
		})
	})
}

func sushyIronic39(t *testing.T, lib sushyLib, env *demo.Env, vms []int) {
	a := adminFor(t, env)
	order := recordOrder(t, a)
	before := env.Sim.Counters()
	image := imageURL(env, "boot.iso")

	start := time.Now()
	cd := runSushy(t, lib, env, "sushy_ironic39.py", "session", "cd", image, vms)
	t.Logf("TIMING sushy %s Ironic 39 CD boot of %d VMs at once: %s", lib.Version, len(vms), time.Since(start).Round(time.Millisecond))
	cdVMIs := map[int]types.UID{}
	for _, i := range vms {
		id := sysID(i)
		got := cd.Systems[id]
		want := map[string]any{
			"session":          true,
			"media_collection": "/redfish/v1/Systems/" + id + "/VirtualMedia",
			"ejected":          []any{[]any{"cd0", 204.0}},
			"refused_inserts": []any{
				[]any{400.0, "PropertyValueNotInList"},
				[]any{400.0, "PropertyValueNotInList"},
				[]any{400.0, "PropertyValueNotInList"},
			},
			"media_after_refusals":  []any{nil, false},
			"insert":                202.0,
			"cd_enabled_sent":       nil, // Enabled was already Once: only the target went out
			"boot_before_on":        []any{"Cd", "Once", "UEFI"},
			"on_refusals":           []any{},
			"media_when_on":         []any{image, true, "Stream"},
			"boot_after_first_boot": []any{"None", "Disabled", "UEFI"},
			"power":                 "On",
		}
		if diff := cmp.Diff(want, withoutSteps(got)); diff != "" {
			t.Errorf("%s: what sushy 5.8 saw in Ironic 39's CD boot (-want +got):\n%s", id, diff)
		}
		t.Logf("%s CD boot steps (s): %v", id, got["steps"])
		cdVMIs[i] = checkCDBooted(t, a, env, order, i, image)
	}

	start = time.Now()
	deploy := runSushy(t, lib, env, "sushy_ironic39.py", "session", "deploy", image, vms)
	t.Logf("TIMING sushy %s Ironic 39 deploy (eject, Hdd/Continuous, ForceOff then On at once) of %d VMs at once: %s", lib.Version, len(vms), time.Since(start).Round(time.Millisecond))
	for _, i := range vms {
		id := sysID(i)
		got := deploy.Systems[id]
		// A 409 answer to the On is allowed (Ironic retries it); anything
		// else the script fails on.
		t.Logf("%s deploy: On refused while the ForceOff ran: %v; steps (s): %v", id, got["on_refusals"], got["steps"])
		delete(got, "on_refusals")
		want := map[string]any{
			"ejected":           []any{[]any{"cd0", 204.0}},
			"media_after_eject": []any{nil, false},
			"boot":              []any{"Hdd", "Continuous", "UEFI"},
			"power":             "On",
		}
		if diff := cmp.Diff(want, withoutSteps(got)); diff != "" {
			t.Errorf("%s: what sushy 5.8 saw in Ironic 39's deploy (-want +got):\n%s", id, diff)
		}
		checkDeployed(t, a, i, cdVMIs[i])
	}
	checkImports(t, env, before, len(vms))
}
