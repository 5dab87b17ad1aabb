package ironic

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// checkSystemMedia39 checks how Ironic 39 inserted the node's virtual media
// (the recorder's exchanges): through the System's VirtualMedia only (21.4
// goes through the Manager), each InsertMedia with TransferProtocolType,
// and the first one after the System's media were read and every inserted
// one ejected (eject-all first).
func checkSystemMedia39(t *testing.T, n *node) {
	t.Helper()
	id := n.key.ID()
	const insert = "/Actions/VirtualMedia.InsertMedia"
	if got := n.rec.matching(http.MethodPost, "/Managers/"+id+"/VirtualMedia/", ""); len(got) > 0 {
		t.Errorf("Ironic 39 used the Manager's VirtualMedia: %v", got[0])
	}
	inserts := n.rec.matching(http.MethodPost, "/Systems/"+id+"/VirtualMedia/", "")
	var first *exchange
	for i, e := range inserts {
		if !strings.HasSuffix(e.path, insert) {
			continue
		}
		if first == nil {
			first = &inserts[i]
		}
		if !strings.Contains(e.reqBody, `"TransferProtocolType"`) || e.status/100 != 2 {
			t.Errorf("Ironic 39 InsertMedia: %v; want TransferProtocolType, accepted", e)
		}
	}
	if first == nil {
		t.Fatalf("Ironic 39 sent no InsertMedia through /Systems/%s/VirtualMedia", id)
	}
	// Every slot read before the insert (Ironic reads each to eject the
	// inserted ones); none is inserted on a fresh VM, so none is ejected.
	for _, slot := range []string{media.DefaultSlot, "usb0"} {
		if !n.rec.before(http.MethodGet, "/Systems/"+id+"/VirtualMedia/"+slot, first.at) {
			t.Errorf("Ironic 39 inserted before reading %s (eject-all first)", slot)
		}
	}
}

// checkInsertPolled checks that Ironic 39 read the node's slot back after
// its last InsertMedia there, before it went on to power the node
// (`[redfish] enable_vmedia_insert_polling`): a GET of the slot between the
// insert and the next Reset (or now, when none followed).
func (n *node) checkInsertPolled(t *testing.T, slot string) {
	t.Helper()
	path := "/Systems/" + n.key.ID() + "/VirtualMedia/" + slot
	inserted, ok := n.rec.lastAt(http.MethodPost, path+"/Actions/VirtualMedia.InsertMedia", "")
	if !ok {
		t.Fatalf("Ironic 39 sent no InsertMedia to %s", path)
	}
	until, ok := n.rec.firstAfter(http.MethodPost, "/Systems/"+n.key.ID()+"/Actions/ComputerSystem.Reset", inserted)
	if !ok {
		until = time.Now()
	}
	if read, ok := n.rec.firstAfter(http.MethodGet, path, inserted); !ok || !read.Before(until) {
		t.Errorf("Ironic 39 did not read %s back after its InsertMedia at %s, before the next Reset (at %s): insert polling off?",
			path, inserted.Format("15:04:05.000"), until.Format("15:04:05.000"))
	}
}

// httpBootScenario (Ironic 39's redfish-https boot interface): a ramdisk
// deploy whose instance ISO the VM boots through UefiHttp and
// Boot.HttpBootUri, not virtual media: the bridge imports the URI into the
// httpboot slot and boots it first; undeploy powers off.
func httpBootScenario(t *testing.T, s *suite, v crds.Variant) {
	image := s.imageURL(bootISO)
	n := s.enroll(t, v, vmHTTPBoot, "ramdisk", nil)
	n.step(t, "boot interface redfish-https", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "replace", "path": "/boot_interface", "value": "redfish-https"}); err != nil {
			t.Fatalf("boot_interface redfish-https: %v", err)
		}
	})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "provide", func() { n.provision(t, "provide", "available", nil) })
	n.step(t, "deploy to active through UefiHttp", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "add", "path": "/instance_info/boot_iso", "value": image}); err != nil {
			t.Fatalf("set instance_info/boot_iso: %v", err)
		}
		got := n.provision(t, "active", "active", nil)
		if str(got.PowerState) != "power on" || str(got.LastError) != "" {
			t.Errorf("active node: %s", got.Summary())
		}
		if sent := n.rec.matching(http.MethodPatch, "/Systems/"+n.key.ID(), `"UefiHttp"`); len(sent) == 0 || !strings.Contains(sent[len(sent)-1].reqBody, image) {
			t.Errorf("Ironic sent no Boot PATCH with UefiHttp and HttpBootUri %s: %v", image, sent)
		}
		if got := n.rec.matching(http.MethodPost, "/VirtualMedia/", ""); len(got) > 0 && strings.Contains(got[len(got)-1].path, n.key.ID()) {
			t.Errorf("redfish-https used virtual media: %v", got[len(got)-1])
		}
		vmi := n.waitVMI(t, "VMI Running", running)
		spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
		disk := apply.DiskName(system.HTTPBootSlot)
		if ds := vmcheck.Disks(spec); len(ds) == 0 || ds[0].Name != disk || !ds[0].CDROM || ds[0].BootOrder == 0 {
			t.Errorf("VMI %s disks by boot order %+v: want the %s CD-ROM first", vmi.GetUID(), ds, disk)
		}
		if slot := vmcheck.MustSlot(t, n.vm(t), system.HTTPBootSlot); slot.Image != image || slot.Phase != system.MediaReady {
			t.Errorf("httpboot slot %+v, want %s Ready", slot, image)
		}
	})
	n.step(t, "boot device disk: sushy PATCHes HttpBootUri null, the reboot boots the disk", func() {
		n.clearedHTTPBoot(t, image)
	})
	n.step(t, "undeploy", func() {
		n.provision(t, "deleted", "available", nil)
		n.waitVMI(t, "VMI gone", func(vmi *unstructured.Unstructured) bool { return vmi == nil })
	})
	n.checkFields(t)
}

// clearedHTTPBoot sets the active node's boot device to disk through
// Ironic, whose sushy 5.13 clears the System's HttpBootUri (image) in the
// same PATCH (`"HttpBootUri": null`, sent because the System shows it set):
// the PATCH is accepted, the System reads HttpBootUri null, the httpboot
// slot is empty, and Ironic's reboot starts a VMI without the image, its
// PVC released.
func (n *node) clearedHTTPBoot(t *testing.T, image string) {
	t.Helper()
	id := n.key.ID()
	since := time.Now()
	if err := n.s.api.SetBootDevice(t.Context(), n.uuid, "disk", false); err != nil {
		t.Fatalf("boot device disk: %v", err)
	}
	var cleared []exchange
	for _, e := range n.rec.matching(http.MethodPatch, "/Systems/"+id, "HttpBootUri") {
		if e.at.After(since) && strings.Contains(strings.ReplaceAll(e.reqBody, " ", ""), `"HttpBootUri":null`) {
			cleared = append(cleared, e)
		}
	}
	if len(cleared) != 1 || cleared[0].status != http.StatusNoContent || !strings.Contains(cleared[0].reqBody, `"Hdd"`) {
		t.Fatalf("Ironic's boot device disk: PATCHes with HttpBootUri null %v, want one with target Hdd, answered 204", cleared)
	}
	sys := n.redfish(t, "/redfish/v1/Systems/"+id)
	if boot, _ := sys["Boot"].(map[string]any); boot["HttpBootUri"] != nil || boot["BootSourceOverrideTarget"] != "Hdd" {
		t.Errorf("System Boot after the null PATCH: %v, want HttpBootUri null, target Hdd", boot)
	}
	n.eventually(t, "the httpboot slot empty", func(context.Context) error {
		if slot := vmcheck.MustSlot(t, n.vm(t), system.HTTPBootSlot); slot.Phase != system.MediaEmpty {
			return fmt.Errorf("httpboot slot %+v after the null PATCH, want empty (%s cleared)", slot, image)
		}
		return nil
	})
	before := n.vmi(t)
	n.power(t, "rebooting", "power on")
	disk := apply.DiskName(system.HTTPBootSlot)
	vmi := n.waitVMI(t, "a new VMI Running after the reboot", func(vmi *unstructured.Unstructured) bool {
		return running(vmi) && (before == nil || vmi.GetUID() != before.GetUID())
	})
	spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
	if claim, ok := vmcheck.Volumes(spec)[disk]; ok {
		t.Errorf("VMI %s has volume %s (claim %q): the cleared HttpBootUri image booted", vmi.GetUID(), disk, claim)
	}
	if ds := vmcheck.Disks(spec); len(ds) == 0 || ds[0].CDROM {
		t.Errorf("VMI %s disks by boot order %+v: want the disk first", vmi.GetUID(), ds)
	}
	n.eventually(t, "the httpboot PVC released", func(ctx context.Context) error {
		left, err := vmcheck.MediaObjects(ctx, n.kube, n.key, system.HTTPBootSlot)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("left behind: %v", left)
		}
		return nil
	})
}
