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
	numScenarios
)

// numVMs is the sample VMs of each variant's demo. Variant k enrolls
// vm-(k*numScenarios+scenario): the simulator derives MACs from the VM's
// name, and Ironic refuses a second port with a MAC it already has, so the
// two variants must not enroll VMs of the same name.
var numVMs = numScenarios * len(crds.Variants)

// vmIndex is the sample VM variant v enrolls for scenario.
func vmIndex(v crds.Variant, scenario int) int {
	return slices.Index(crds.Variants, v)*numScenarios + scenario
}
