package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestUefiHttpBoot runs Ironic's redfish-https boot with sushy 5.8:
// set_system_boot_options(UefiHttp, Once, UEFI, http_boot_uri) and power on
// at once. The URI is imported like virtual media; the VM starts only after
// the import, with the image first in boot order; after that one boot the
// override reverts (HttpBootUri stays); a null HttpBootUri ejects the image.
func TestUefiHttpBoot(t *testing.T) {
	needSushy58(t)
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		order := recordOrder(t, a)
		key := a.ownVM(t, env, "uefihttp-0")
		uri := imageURL(env, "boot.iso")
		client := redfishClient()
		path := "/redfish/v1/Systems/" + key.ID()

		var got bootResult
		sushy58(t, env, &got, "testdata/sushy58.py", "uefihttp", key.ID(), uri)
		if !slices.Contains(got.Allowed, "UefiHttp") {
			t.Errorf("sushy 5.8 (%s) allowed targets %v: no UefiHttp", got.Sushy, got.Allowed)
		}
		if diff := cmp.Diff([]any{"UefiHttp", "Once", "UEFI", uri}, got.BootBeforeOn); diff != "" {
			t.Errorf("boot read back before power on (-want +got):\n%s", diff)
		}

		vmi := a.runningAfterImports(t, order, key)
		disk := apply.DiskName(system.HTTPBootSlot)
		spec := vmiSpec(t, vmi)
		if boot := vmcheck.Disks(spec); len(boot) == 0 || boot[0].Name != disk || !boot[0].CDROM || boot[0].BootOrder != 1 {
			t.Errorf("VMI boots %+v first, want %s (CD-ROM, bootOrder 1)", boot, disk)
		}
		slot := vmcheck.MustSlot(t, a.vmOf(t, key), system.HTTPBootSlot)
		if slot.Image != uri || slot.Phase != system.MediaReady {
			t.Errorf("httpboot slot %+v, want %s Ready", slot, uri)
		}
		if claim := vmcheck.Volumes(spec)[disk]; claim != slot.ClaimName {
			t.Errorf("VMI volume %s claims %q, want %q", disk, claim, slot.ClaimName)
		}
		if got, want := fileSHA256(t, env.Sim.ImagePath(key.Namespace, slot.ClaimName)), env.Images.SHA256["boot.iso"]; got != want {
			t.Errorf("HttpBootUri image sha256 %s, want %s", got, want)
		}
		// The image is not virtual media.
		if coll := getJSON(t, client, env, path+"/VirtualMedia"); fmt.Sprint(coll["Members@odata.count"]) != "2" {
			t.Errorf("VirtualMedia collection %v, want cd0 and usb0 only", coll["Members"])
		}

		// One boot: the Once override reverts, the URI stays recorded.
		waitFor(t, "Once reverted", func() (bool, string) {
			b := getJSON(t, client, env, path)["Boot"].(map[string]any)
			return b["BootSourceOverrideTarget"] == "None" && b["BootSourceOverrideEnabled"] == "Disabled" && b["HttpBootUri"] == uri,
				fmt.Sprintf("%v %v %v", b["BootSourceOverrideTarget"], b["BootSourceOverrideEnabled"], b["HttpBootUri"])
		})
		if d := diskOf(vmcheck.MustTemplateSpec(t, a.vmOf(t, key)), disk); d == nil || d["bootOrder"] != nil {
			t.Errorf("after the revert the template's %s is %v, want present without bootOrder", disk, d)
		}

		// Clearing HttpBootUri ejects the image: disk, volume and PVC go.
		if status, body := call(t, client, env, http.MethodPatch, path, `{"Boot":{"HttpBootUri":null}}`); status/100 != 2 {
			t.Fatalf("PATCH HttpBootUri null: %d %s", status, body)
		}
		a.waitMediaGone(t, key, system.HTTPBootSlot)
		noCorruption(t, env, key)
	})
}

// TestUefiHttpRefused: UefiHttp without a URI (the bridge has no DHCP
// source) or on a Legacy system is a 400 that writes nothing.
func TestUefiHttpRefused(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		key := a.ownVM(t, env, "uefihttp-1")
		client := redfishClient()
		path := "/redfish/v1/Systems/" + key.ID()
		written := func() any {
			vm := a.vmOf(t, key)
			return []any{vm.GetAnnotations(), vm.Object["spec"]}
		}
		before := written()
		for _, body := range []string{
			`{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideEnabled":"Once"}}`,
			`{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideEnabled":"Once","BootSourceOverrideMode":"Legacy","HttpBootUri":"` + imageURL(env, "boot.iso") + `"}}`,
			`{"Boot":{"BootSourceOverrideTarget":"UefiHttp","HttpBootUri":"ftp://192.0.2.1/boot.iso"}}`,
		} {
			if status, resp := call(t, client, env, http.MethodPatch, path, body); status != http.StatusBadRequest {
				t.Errorf("PATCH %s: %d %s, want 400", body, status, resp)
			}
		}
		if diff := cmp.Diff(before, written()); diff != "" {
			t.Errorf("refused PATCHes wrote the VM's annotations or spec (-before +after):\n%s", diff)
		}
		if objs, err := vmcheck.MediaObjects(t.Context(), a.kube, key, system.HTTPBootSlot); err != nil || len(objs) != 0 {
			t.Errorf("refused PATCHes left import objects %v (%v)", objs, err)
		}
	})
}
