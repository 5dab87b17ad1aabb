package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/sim"
	"github.com/redfish-bridge/redfish-bridge/testcluster"
)

// TestNodeSideVirtAPI runs VMs with virt-api's admission webhooks on
// (testcluster Options.VirtAPI), on both CRD variants, with the simulator
// writing as virt-handler (testcluster's Cluster.VirtHandler: virt-api's
// VMI mutator reverts status writes by any other identity, which left VMIs
// Scheduled, or Pending when virt-controller ran as the admin). The VM shape
// of the PVC case is the one the bridge's Cd Once override lays out (a
// CD-ROM first in boot order, rebootPolicy Terminate).
func TestNodeSideVirtAPI(t *testing.T) {
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			c := testcluster.ForTestWith(t, testcluster.Options{Variant: v, VirtAPI: true})
			e := startOn(t, c, sim.Options{StartDelay: 20 * time.Millisecond, StopDelay: 20 * time.Millisecond})
			t.Run("Run", e.testRunVirtAPI)
			t.Run("GuestShutdownAlways", e.testGuestShutdownAlways)
			t.Run("Halt", e.testHalt)
			t.Run("PVCVolume", e.testPVCVolume)
		})
	}
}

// testRunVirtAPI: a VM runs; its firmware UUID is the one virt-api's
// mutator gave it at creation (random, not kubevirt.LegacyFirmwareUUID),
// which virt-controller then leaves alone and hands to the VMI.
func (e *env) testRunVirtAPI(t *testing.T) {
	created := e.createVM(t, newVM(e.ns, "run", "Always"))
	uuid := str(created, "spec", "template", "spec", "domain", "firmware", "uuid")
	if uuid == "" || uuid == kubevirt.LegacyFirmwareUUID("run") {
		t.Errorf("firmware uuid at creation %q, want a random one from virt-api's mutator", uuid)
	}
	vmi := e.vmiIs(t, "run", "Running", "")
	vm := e.vmIs(t, "run", "Running")
	if got := str(vm, "spec", "template", "spec", "domain", "firmware", "uuid"); got != uuid {
		t.Errorf("VM firmware uuid %q after the run, want %q from creation", got, uuid)
	}
	if got := str(vmi, "spec", "domain", "firmware", "uuid"); got != uuid {
		t.Errorf("VMI firmware uuid %q, want the VM's %q", got, uuid)
	}
	for _, mf := range vm.GetManagedFields() {
		if mf.Manager == "virt-controller" && strings.Contains(mf.FieldsV1.String(), `"f:firmware"`) {
			t.Errorf("virt-controller wrote the firmware of a VM virt-api had defaulted: %s", mf.FieldsV1.String())
		}
	}
}
