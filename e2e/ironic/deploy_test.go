package ironic

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// virtualMediaDeployScenario: a custom-agent deploy over virtual media.
// The conductor inserts the agent ISO, boots it and waits for an agent
// that never calls: the VMI must have booted the CD first; the callback
// timeout fails the deploy, and undeploy ejects the ISO and powers off.
func virtualMediaDeployScenario(t *testing.T, s *suite, v crds.Variant) {
	image := s.imageURL(deployISO)
	n := s.enroll(t, v, vmVirtualMedia, "custom-agent", map[string]any{"deploy_iso": image})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "provide", func() { n.provision(t, "provide", "available", nil) })
	n.step(t, "deploy: the agent ISO boots from virtual media", func() {
		if err := s.api.Provision(t.Context(), n.uuid, "active", nil); err != nil {
			t.Fatalf("deploy: %v", err)
		}
		n.waitState(t, "wait call-back")
		n.bootedCD(t, image, "")
	})
	n.step(t, "no agent calls: the callback timeout fails the deploy", func() {
		got := n.waitState(t, "deploy failed")
		if le := str(got.LastError); !strings.Contains(le, "Timeout reached while waiting for callback") {
			t.Errorf("deploy failed with %q, want the callback timeout", le)
		}
	})
	n.step(t, "undeploy", func() {
		n.provision(t, "deleted", "available", nil)
		n.poweredOffEjected(t)
	})
	n.checkFields(t)
}

// cleanAbortScenario: manual cleaning boots the agent ISO; aborting it in
// clean wait fails the cleaning, ejects the ISO and powers off; manage
// takes the node back.
func cleanAbortScenario(t *testing.T, s *suite, v crds.Variant) {
	image := s.imageURL(deployISO)
	n := s.enroll(t, v, vmClean, "custom-agent", map[string]any{"deploy_iso": image})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "clean: the agent ISO boots from virtual media", func() {
		steps := []map[string]any{{"interface": "deploy", "step": "erase_devices_metadata"}}
		if err := s.api.Provision(t.Context(), n.uuid, "clean", map[string]any{"clean_steps": steps}); err != nil {
			t.Fatalf("clean: %v", err)
		}
		n.waitState(t, "clean wait")
		n.bootedCD(t, image, "")
	})
	n.step(t, "abort", func() {
		got := n.provision(t, "abort", "clean failed", nil)
		if le := str(got.LastError); !strings.Contains(le, "clean operation was aborted") {
			t.Errorf("aborted cleaning: %s, want last_error saying it was aborted", got.Summary())
		}
		n.poweredOffEjected(t)
	})
	n.step(t, "manage after the failed cleaning", func() { n.provision(t, "manage", "manageable", nil) })
	n.checkFields(t)
}

// ramdiskDeployScenario: a ramdisk deploy boots the instance ISO from
// virtual media to active (on Ironic 39 through the System's media with
// TransferProtocolType: checkSystemMedia39); rebuild boots it again in a
// new VMI (Ironic 39.0.0 refuses it on its own bug); undeploy ejects it
// and powers off.
func ramdiskDeployScenario(t *testing.T, s *suite, v crds.Variant) {
	image := s.imageURL(bootISO)
	var info map[string]any
	if s.is39() {
		// Ironic 39 sends TransferProtocolType only when told which: it
		// checks the bridge offers it first.
		info = map[string]any{"vmedia_transport_protocol": "HTTP"}
	}
	n := s.enroll(t, v, vmRamdisk, "ramdisk", info)
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "provide", func() { n.provision(t, "provide", "available", nil) })
	var first *unstructured.Unstructured
	n.step(t, "deploy to active", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "add", "path": "/instance_info/boot_iso", "value": image}); err != nil {
			t.Fatalf("set instance_info/boot_iso: %v", err)
		}
		got := n.provision(t, "active", "active", nil)
		if str(got.PowerState) != "power on" || str(got.LastError) != "" {
			t.Errorf("active node: %s", got.Summary())
		}
		first = n.bootedCD(t, image, "")
		if s.is39() {
			checkSystemMedia39(t, n)
		}
	})
	n.step(t, "rebuild", func() {
		if s.is39() {
			// Ironic 39.0.0's own bug: start_deploy reads auto_lessee,
			// which only a deploy sets. Its test for it says when a
			// fixed Ironic arrives.
			err := s.api.Provision(t.Context(), n.uuid, "rebuild", nil)
			if err == nil || !strings.Contains(err.Error(), "auto_lessee") {
				t.Fatalf("Ironic 39 rebuild: %v, want its auto_lessee bug (fixed? then check the rebuild as on 21.4)", err)
			}
			t.Logf("Ironic 39 refuses the rebuild on its own bug: %v", err)
			return
		}
		n.provision(t, "rebuild", "active", nil)
		n.bootedCD(t, image, first.GetUID())
	})
	n.step(t, "undeploy", func() {
		n.provision(t, "deleted", "available", nil)
		n.poweredOffEjected(t)
	})
	n.checkFields(t)
}

// waitState waits until the node is in provision state want with nothing
// in flight but the wait itself; any failed state fails at once.
func (n *node) waitState(t *testing.T, want string) ironicproc.Node {
	t.Helper()
	got := n.wait(t, "provision state "+want, func(x ironicproc.Node) bool {
		return str(x.Reservation) == "" && str(x.TargetPowerState) == "" &&
			(x.ProvisionState == want || strings.HasSuffix(x.ProvisionState, "failed"))
	})
	if got.ProvisionState != want {
		t.Fatalf("provision state: %s, want %s", got.Summary(), want)
	}
	return got
}

// bootedCD waits for a Running VMI (other than the one with UID notUID)
// that boots the virtual-media CD-ROM first, from the PVC holding image,
// and returns it; on Ironic 39 the insert was read back (polling).
func (n *node) bootedCD(t *testing.T, image string, notUID any) *unstructured.Unstructured {
	t.Helper()
	vmi := n.waitVMI(t, "a new VMI Running", func(vmi *unstructured.Unstructured) bool {
		return running(vmi) && vmi.GetUID() != notUID
	})
	spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
	cd := apply.DiskName(media.DefaultSlot)
	if ds := vmcheck.Disks(spec); len(ds) == 0 || ds[0].Name != cd || !ds[0].CDROM || ds[0].BootOrder == 0 {
		t.Errorf("VMI %s disks by boot order %+v: want the %s CD-ROM first", vmi.GetUID(), ds, cd)
	}
	claim := media.ClaimName(n.key, media.DefaultSlot)
	if got := vmcheck.Volumes(spec)[cd]; got != claim {
		t.Errorf("VMI volume %s claim %q, want %q", cd, got, claim)
	}
	slot, err := vmcheck.Slot(n.vm(t), media.DefaultSlot)
	if err != nil {
		t.Fatal(err)
	}
	if slot.Phase != system.MediaReady || slot.Image != image {
		t.Errorf("slot %+v, want Ready with %s", slot, image)
	}
	if n.s.is39() {
		n.checkInsertPolled(t, media.DefaultSlot)
	}
	return vmi
}

// poweredOffEjected waits until the VM has no VMI, an empty slot and no
// import pod or media PVC left.
func (n *node) poweredOffEjected(t *testing.T) {
	t.Helper()
	n.waitVMI(t, "VMI gone", func(vmi *unstructured.Unstructured) bool { return vmi == nil })
	if slot, err := vmcheck.Slot(n.vm(t), media.DefaultSlot); err != nil || slot.Phase != system.MediaEmpty {
		t.Errorf("slot %+v (%v) after Ironic's teardown, want empty", slot, err)
	}
	if rs := n.vm(t).Object["spec"].(map[string]any)["runStrategy"]; rs != "Halted" {
		t.Errorf("runStrategy %v after Ironic's teardown, want Halted", rs)
	}
	n.waitVMI(t, "import pods and media PVC gone", func(*unstructured.Unstructured) bool {
		left, err := vmcheck.MediaObjects(t.Context(), n.kube, n.key, media.DefaultSlot)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Logf("left: %s", fmt.Sprint(left))
		}
		return len(left) == 0
	})
}
