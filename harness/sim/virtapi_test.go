package sim_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
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
			t.Run("VolumeWithoutDisk", e.testVolumeWithoutDiskVirtAPI)
			t.Run("Console", func(t *testing.T) { e.testConsole(t, c) })
			t.Run("Screen", func(t *testing.T) { e.testScreen(t, c) })
			t.Run("Screenshot", func(t *testing.T) { e.testScreenshot(t, c) })
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
		if mf.Manager == kubevirt.ControllerFieldManager && strings.Contains(mf.FieldsV1.String(), `"f:firmware"`) {
			t.Errorf("virt-controller wrote the firmware of a VM virt-api had defaulted: %s", mf.FieldsV1.String())
		}
	}
}

// testVolumeWithoutDiskVirtAPI: the other corruption the race suite
// checks, a template volume without a disk, passes virt-api: the VM is
// admitted, and the VMI virt-controller creates from it gets a disk for
// the volume from KubeVirt's defaults (attached as a plain disk) and runs.
// virt-api turns only a disk without a volume into an admission error.
func (e *env) testVolumeWithoutDiskVirtAPI(t *testing.T) {
	vm := newVM(e.ns, "orphan-volume", "Always")
	spec := vm.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["volumes"] = append(spec["volumes"].([]any), map[string]any{"name": "orphan", "containerDisk": map[string]any{"image": "quay.io/containerdisks/fedora:latest"}})
	e.createVM(t, vm)
	vmi := e.vmiIs(t, "orphan-volume", "Running", "")
	disks, _, _ := unstructured.NestedSlice(vmi.Object, "spec", "domain", "devices", "disks")
	var attached map[string]any
	for _, d := range disks {
		if m, _ := d.(map[string]any); m["name"] == "orphan" {
			attached = m
		}
	}
	if attached == nil {
		t.Fatalf("VMI disks %v: the volume without a disk was not attached", disks)
	}
	if _, cdrom := attached["cdrom"]; cdrom {
		t.Errorf("orphan volume attached as %v, want a plain disk", attached)
	}
}
