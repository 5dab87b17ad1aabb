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
	{"power", powerScenario},
	{"boot-device", bootDeviceScenario},
	{"boot-mode-secure-boot", bootModeScenario},
	{"inspect", inspectScenario},
	{"virtual-media-deploy", virtualMediaDeployScenario},
	{"clean-abort", cleanAbortScenario},
	{"ramdisk-deploy", ramdiskDeployScenario},
}

// TestIronic runs every scenario on both CRD variants, all at once on one
// conductor (subtests TestIronic/<scenario>/<variant>). The subtests run in
// goroutines rather than with t.Parallel, so go test's -parallel (the
// number of CPUs) does not serialise them: most of their time is spent
// waiting for the conductor.
func TestIronic(t *testing.T) {
	s := suiteFor(t)
	var wg sync.WaitGroup
	for _, sc := range scenarios {
		for _, v := range crds.Variants {
			wg.Go(func() { t.Run(sc.name+"/"+string(v), func(t *testing.T) { sc.run(t, s, v) }) })
		}
	}
	wg.Wait()
}
