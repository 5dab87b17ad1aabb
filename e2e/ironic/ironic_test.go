package ironic

import (
	"sync"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// scenarios are what an operator does with a node, each on its own node
// and VM.
var scenarios = []struct {
	name string
	run  func(t *testing.T, s *suite, v crds.Variant)
}{
	{"virtual-media-deploy", virtualMediaDeployScenario}, // longest first: it waits out the callback timeout
	{"slow-import-deploy", slowImportDeployScenario},     // so does this one
	{"power", powerScenario},
	{"boot-mode-secure-boot", bootModeScenario},
	{"ramdisk-deploy", ramdiskDeployScenario},
	{"clean-abort", cleanAbortScenario},
	{"inspect", inspectScenario},
	{"boot-device", bootDeviceScenario},
}

// maxNodesAtOnce bounds the nodes the one conductor works on at once: with
// 8 and 14 its sqlite database and single eventlet process stalled on two
// busy cores ("database is locked", nodes stuck in verifying).
const maxNodesAtOnce = 4

// TestIronic runs every scenario on both CRD variants, up to maxNodesAtOnce
// nodes at once on one conductor (subtests TestIronic/<scenario>/<variant>). The subtests run in
// goroutines rather than with t.Parallel, so go test's -parallel (the
// number of CPUs) does not serialise them: most of their time is spent
// waiting for the conductor.
func TestIronic(t *testing.T) {
	s := suiteFor(t)
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxNodesAtOnce)
	for _, sc := range scenarios {
		for _, v := range crds.Variants {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				t.Run(sc.name+"/"+string(v), func(t *testing.T) { sc.run(t, s, v) })
			})
		}
	}
	wg.Wait()
}
