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
}

// scenarios are what an operator does with a node, each on its own node
// and VM.
var scenarios = []scenario{
	{"virtual-media-deploy", virtualMediaDeployScenario}, // longest first: it waits out the callback timeout
	{"slow-import-deploy", slowImportDeployScenario},     // so does this one
	{"power", powerScenario},
	{"boot-mode-secure-boot", bootModeScenario},
	{"ramdisk-deploy", ramdiskDeployScenario},
	{"clean-abort", cleanAbortScenario},
	{"inspect", inspectScenario},
	{"boot-device", bootDeviceScenario},
}

// scenarios39 are what only Ironic 39 does: they run after the others.
var scenarios39 = []scenario{
	{"http-boot-deploy", httpBootScenario},
	{"bios", biosScenario},
	{"firmware-update", firmwareUpdateScenario},
	{"vmedia-attach-running", vmediaAttachRunningScenario},
	{"events-passthru", eventsScenario},
}

// maxNodesAtOnce bounds the nodes one conductor works on at once: with
// 8 and 14 its sqlite database and single process stalled on two busy
// cores ("database is locked", nodes stuck in verifying).
const maxNodesAtOnce = 4

// TestIronic runs every scenario on both CRD variants with each Ironic
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
