package ironic

import (
	"slices"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// The scenario each sample VM serves (one node per VM and variant).
const (
	vmPower = iota
	vmBoot
	vmBootMode
	vmInspect
	vmVirtualMedia
	vmClean
	vmRamdisk
	vmSlowImport
	vmHTTPBoot   // Ironic 39 only
	vmBios       // Ironic 39 only
	vmFirmware   // Ironic 39 only
	vmAttach     // Ironic 39 only
	vmFailImport // Ironic 39 only
	vmIPMI       // Ironic 39 only
	vmEvents     // Ironic 39 only
	vmHTTPSCA    // Ironic 39 only
	vmUntrusted  // Ironic 39 only
	vmConsole    // Ironic 39 only
	vmPowerClock // the power scenario's clock node (see powerScenario)
	numScenarios
)

// numVMs is the sample VMs of each variant's demo. Conductor c (suite.ord)
// enrolls vm-((c*len(variants)+k)*numScenarios+scenario) for variant k: a
// VM is driven by one node, and the simulator derives MACs from the VM's
// name, so one conductor's two variants must not enroll VMs of the same
// name (Ironic refuses a second port with a MAC it already has).
var numVMs = numScenarios * len(crds.Variants) * numConductors

// vmIndex is the sample VM the suite's conductor enrolls for scenario on
// variant v.
func (s *suite) vmIndex(v crds.Variant, scenario int) int {
	return (s.ord*len(crds.Variants)+slices.Index(crds.Variants, v))*numScenarios + scenario
}
