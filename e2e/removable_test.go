package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// bootResult is what testdata/sushy58_boot.py prints.
type bootResult struct {
	Sushy        string              `json:"sushy"`
	MediaTypes   map[string][]string `json:"media_types"`
	USBSlot      string              `json:"usb_slot"`
	CDSlot       string              `json:"cd_slot"`
	Allowed      []string            `json:"allowed"`
	BootBeforeOn []any               `json:"boot_before_on"`
}

// diskOf returns the disk named name of a (template or VMI) spec, nil if none.
func diskOf(spec map[string]any, name string) map[string]any {
	disks, _, _ := unstructured.NestedSlice(spec, "domain", "devices", "disks")
	for _, d := range disks {
		if m, ok := d.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return nil
}

// TestRemovableConfigMedia runs Ironic's config_via_removable with sushy
// 5.8: it finds the slot whose MediaTypes has USBStick, inserts the
// configuration image there and the ISO into the CD, boots Cd/Once and
// powers on at once. The VM starts only after both imports, with the USB
// stick as a read-only disk on bus usb (never booted before the CD or the
// root disk); eject removes the disk, its volume and its PVC.
func TestRemovableConfigMedia(t *testing.T) {
	needSushy58(t)
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		order := recordOrder(t, a)
		key := a.ownVM(t, env, "usb-0")
		config, iso := imageURL(env, "deploy.iso"), imageURL(env, "boot.iso")

		var got bootResult
		sushy58(t, env, &got, "testdata/sushy58.py", "removable", key.ID(), config, iso)
		if diff := cmp.Diff(map[string][]string{"cd0": {"CD", "DVD"}, "usb0": {"USBStick"}}, got.MediaTypes); diff != "" {
			t.Errorf("slots as sushy 5.8 (%s) reads them (-want +got):\n%s", got.Sushy, diff)
		}
		if got.USBSlot != media.USBSlot || got.CDSlot != media.DefaultSlot {
			t.Errorf("sushy chose USB slot %q and CD slot %q", got.USBSlot, got.CDSlot)
		}

		vmi := a.runningAfterImports(t, order, key)
		spec := vmiSpec(t, vmi)
		usbDisk := apply.DiskName(media.USBSlot)
		disk := diskOf(spec, usbDisk)
		if diff := cmp.Diff(map[string]any{"bus": "usb", "readonly": true}, disk["disk"]); diff != "" {
			t.Errorf("VMI's USB stick disk %v (-want +got):\n%s", disk, diff)
		}
		usb := vmcheck.MustSlot(t, a.vmOf(t, key), media.USBSlot)
		if got, want := fileSHA256(t, env.Sim.ImagePath(key.Namespace, usb.ClaimName)), env.Images.SHA256["deploy.iso"]; got != want {
			t.Errorf("USB stick image sha256 %s, want %s", got, want)
		}
		if claim := vmcheck.Volumes(spec)[usbDisk]; claim != usb.ClaimName {
			t.Errorf("VMI volume %s claims %q, want %q", usbDisk, claim, usb.ClaimName)
		}
		var bootNames []string
		for _, d := range vmcheck.Disks(spec) {
			bootNames = append(bootNames, d.Name)
		}
		if diff := cmp.Diff([]string{apply.DiskName(media.DefaultSlot), "rootdisk", usbDisk}, bootNames); diff != "" {
			t.Errorf("VMI boot order (-want +got):\n%s", diff)
		}

		// Ironic's clean-up ejects the stick.
		client := redfishClient()
		path := "/redfish/v1/Systems/" + key.ID() + "/VirtualMedia/" + media.USBSlot
		if status, body := call(t, client, env, http.MethodPost, path+"/Actions/VirtualMedia.EjectMedia", ""); status/100 != 2 {
			t.Fatalf("EjectMedia: %d %s", status, body)
		}
		a.waitMediaGone(t, key, media.USBSlot)
		if inserted := getJSON(t, client, env, path)["Inserted"]; inserted != false {
			t.Errorf("ejected USB stick shows Inserted %v", inserted)
		}
		noCorruption(t, env, key)
	})
}

// runningAfterImports waits for VM key's VMI to run and checks, by etcd
// revision (orderRecorder), that it was created only after every media slot
// of the VM was Ready.
func (a admin) runningAfterImports(t *testing.T, order *orderRecorder, key system.Key) *unstructured.Unstructured {
	t.Helper()
	var vmi *unstructured.Unstructured
	waitFor(t, "VMI Running", func() (bool, string) {
		vmi = a.vmiOf(t.Context(), t, key)
		return vmi != nil && phase(vmi) == "Running", "no running VMI"
	})
	ready, added := order.revisions(key.Name)
	if ready == 0 || added == 0 || added < ready {
		t.Errorf("VMI created at revision %d, media Ready at %d: the VM started before its images were there", added, ready)
	}
	return vmi
}

// waitMediaGone waits until slot's disk, volume, import pods and PVC are
// gone from VM key.
func (a admin) waitMediaGone(t *testing.T, key system.Key, slot string) {
	t.Helper()
	disk := apply.DiskName(slot)
	waitFor(t, slot+" ejected", func() (bool, string) {
		tmpl := vmcheck.MustTemplateSpec(t, a.vmOf(t, key))
		objs, err := vmcheck.MediaObjects(t.Context(), a.kube, key, slot)
		if err != nil {
			return false, err.Error()
		}
		_, hasVol := vmcheck.Volumes(tmpl)[disk]
		return diskOf(tmpl, disk) == nil && !hasVol && len(objs) == 0,
			fmt.Sprintf("disk %v, volume %t, objects %v", diskOf(tmpl, disk), hasVol, objs)
	})
}

// noCorruption fails t if the simulator saw VM key corrupted.
func noCorruption(t *testing.T, env *demo.Env, key system.Key) {
	t.Helper()
	for _, c := range env.Sim.Corruptions() {
		if c.VM == key.String() {
			t.Errorf("simulator saw a corrupted VM: %+v", c)
		}
	}
}
