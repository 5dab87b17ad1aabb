package ironic

import (
	"slices"
	"sync"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

type scenario struct {
	name string
	run  func(t *testing.T, s *suite, v crds.Variant)
	// firstVariantOnly: the scenario's proof does not depend on the CRD
	// variant (it writes no VM list, or only what another scenario writes
	// on both), so it runs on the first one only.
	firstVariantOnly bool
}

// scenarios are what an operator does with a node, each on its own node
// and VM.
var scenarios = []scenario{
	{"virtual-media-deploy", virtualMediaDeployScenario, false}, // longest first: it waits out the callback timeout
	{"slow-import-deploy", slowImportDeployScenario, false},     // so does this one
	{"power", powerScenario, false},
	{"boot-mode-secure-boot", bootModeScenario, false},
	{"ramdisk-deploy", ramdiskDeployScenario, false},
	{"clean-abort", cleanAbortScenario, false},
	{"inspect", inspectScenario, true}, // reads the VM, writes nothing
	{"boot-device", bootDeviceScenario, false},
}

// scenarios39 are what only Ironic 39 does: they run after the others.
var scenarios39 = []scenario{
	{"http-boot-deploy", httpBootScenario, false},
	{"bios", biosScenario, false},
	{"firmware-update", firmwareUpdateScenario, true}, // its ramdisk deploy is ramdisk-deploy's; the update is refused
	{"vmedia-attach-running", vmediaAttachRunningScenario, false},
	{"failed-import-deploy", failedImportDeployScenario, false},
	{"ipmi-hardware-type", ipmiScenario, false},
	{"events-passthru", eventsScenario, false},
	{"https-private-ca-deploy", httpsCADeployScenario, true},          // the trust is the bridge's, not the VM list's
	{"https-untrusted-ca-deploy", httpsUntrustedDeployScenario, true}, // so is the refusal
	{"ipmitool-socat-console", consoleScenario, true},                 // the console writes no VM; power is power's
}

// maxNodesAtOnce bounds the nodes one conductor works on at once: with
// 8 and 14 its sqlite database and single process stalled on two busy
// cores ("database is locked", nodes stuck in verifying).
const maxNodesAtOnce = 4

// TestIronic runs every scenario on both CRD variants (those marked
// firstVariantOnly on the first) with each Ironic
// (subtests TestIronic/ironic-<release>/<scenario>/<variant>), the
// conductors side by side, up to maxNodesAtOnce nodes at once on each. The
// subtests run in goroutines rather than with t.Parallel, so go test's
// -parallel (the number of CPUs) does not serialise them: most of their
// time is spent waiting for the conductors. A release that cannot run here
// skips its subtests (fails them under CI=true).
func TestIronic(t *testing.T) {
	var wg sync.WaitGroup
	for _, c := range conductorsFor(t) {
		if c.s == nil {
			t.Run("ironic-"+c.release.Name, func(t *testing.T) {
				testutil.Missing(t, "Ironic %s cannot run: %s", c.release.Name, c.missing)
			})
			continue
		}
		slots := make(chan struct{}, maxNodesAtOnce)
		list := scenarios
		if c.s.is39() {
			list = append(slices.Clone(scenarios), scenarios39...)
		}
		for _, sc := range list {
			for _, v := range crds.Variants {
				if sc.firstVariantOnly && v != crds.Variants[0] {
					continue
				}
				wg.Go(func() {
					slots <- struct{}{}
					defer func() { <-slots }()
					t.Run("ironic-"+c.release.Name+"/"+sc.name+"/"+string(v), func(t *testing.T) { sc.run(t, c.s, v) })
				})
			}
		}
	}
	wg.Wait()
}
