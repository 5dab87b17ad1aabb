package ironic

import (
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
	n.step(t, "undeploy", func() {
		n.provision(t, "deleted", "available", nil)
		n.waitVMI(t, "VMI gone", func(vmi *unstructured.Unstructured) bool { return vmi == nil })
	})
	n.checkFields(t)
}
