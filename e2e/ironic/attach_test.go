package ironic

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/media"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// vmediaAttachRunningScenario (Ironic 39's vmedia API, 1.89, what
// baremetal-operator calls for a DataImage): a CD attached to an active
// node goes into its running VM without a reboot, through KubeVirt's
// declarative volume hotplug, and detached goes out the same way.
//
// Ironic allows the attach in any provision state (it refuses only a node
// in maintenance for a power failure); what matters is the VM: the CD
// goes in hot only into a CD-ROM drive the running VMI already has. So
// the node gets to active by a ramdisk deploy (the ISO in cd0, a plain
// volume the VM boots from); Ironic's detach takes the ISO out of the
// running VM (the drive stays, empty: RestartRequired, a plain volume left
// the running VM); a reboot through Ironic's power API starts a new VMI
// with the empty drive. Then, on that VMI (its UID unchanged throughout:
// no reboot), Ironic's attach (eject-all, then its own copy of the image
// into cd0) writes the volume hotpluggable, virt-controller adds it to the
// VMI and the simulator plays the node side (volumeStatus Ready), no
// RestartRequired, the System's cd0 Inserted with Ironic's URL; Ironic's
// detach unplugs it, the drive stays empty and the PVC and the attachment
// pod go, still no RestartRequired.
func vmediaAttachRunningScenario(t *testing.T, s *suite, v crds.Variant) {
	n := s.enroll(t, v, vmAttach, "ramdisk", map[string]any{"vmedia_transport_protocol": "HTTP"})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "provide", func() { n.provision(t, "provide", "available", nil) })
	var deployed *unstructured.Unstructured
	n.step(t, "ramdisk deploy to active (the ISO in cd0, booted)", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "add", "path": "/instance_info/boot_iso", "value": s.imageURL(bootISO)}); err != nil {
			t.Fatalf("set instance_info/boot_iso: %v", err)
		}
		n.provision(t, "active", "active", nil)
		deployed = n.bootedCD(t, s.imageURL(bootISO), "")
	})
	n.step(t, "vmedia detach of the booted ISO: the drive stays empty, RestartRequired", func() {
		n.vmedia(t, "detach", func() error { return s.api.DetachVMedia(t.Context(), n.uuid, "cdrom") })
		n.eventually(t, "cd0 ejected from the template, RestartRequired", func(context.Context) error {
			vm := n.vm(t)
			if err := emptyDrive(vm); err != nil {
				return err
			}
			if c := kubevirt.VMConditionOf(vm, kubevirt.ConditionRestartRequired); !c.True() {
				return fmt.Errorf("RestartRequired %+v, want True (a plain volume left the running VM)", c)
			}
			return nil
		})
	})
	var booted types.UID
	n.step(t, "reboot through Ironic: a new VMI with the empty drive", func() {
		n.power(t, "rebooting", "power on")
		vmi := n.waitVMI(t, "a new VMI Running after the reboot", func(vmi *unstructured.Unstructured) bool {
			return running(vmi) && vmi.GetUID() != deployed.GetUID()
		})
		booted = vmi.GetUID()
		spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
		cd := apply.DiskName(media.DefaultSlot)
		if !hasCDROM(spec, cd) {
			t.Errorf("VMI %s disks %+v: want the empty %s drive", booted, vmcheck.Disks(spec), cd)
		}
		if claim, ok := vmcheck.Volumes(spec)[cd]; ok {
			t.Errorf("VMI %s has volume %s (claim %q) after the detach", booted, cd, claim)
		}
		n.eventually(t, "RestartRequired cleared by the new VMI", func(context.Context) error {
			if c := kubevirt.VMConditionOf(n.vm(t), kubevirt.ConditionRestartRequired); c.True() {
				return fmt.Errorf("RestartRequired %+v", c)
			}
			return nil
		})
	})
	cd, claim := apply.DiskName(media.DefaultSlot), media.ClaimName(n.key, media.DefaultSlot)
	n.step(t, "vmedia attach into the running VM: hotplugged, no reboot", func() {
		n.vmedia(t, "attach", func() error { return s.api.AttachVMedia(t.Context(), n.uuid, "cdrom", s.imageURL(deployISO)) })
		// Ironic serves its own copy of the image (image_download_source
		// local, its default and baremetal-operator's).
		want := s.ironic.HTTPURL + "/"
		var slot system.MediaSlot
		n.eventually(t, "cd0 Ready with Ironic's copy of the image", func(context.Context) error {
			slot = vmcheck.MustSlot(t, n.vm(t), media.DefaultSlot)
			if slot.Phase != system.MediaReady || !strings.HasPrefix(slot.Image, want) || !strings.HasSuffix(slot.Image, "/cdrom-"+n.uuid+".iso") {
				return fmt.Errorf("slot %+v, want Ready with %s...cdrom-%s.iso", slot, want, n.uuid)
			}
			return nil
		})
		n.checkInsertPolled(t, media.DefaultSlot)
		vol := volumeOf(n.vm(t), cd)
		if hot, _, _ := unstructured.NestedBool(vol, kubevirt.VolumeClaimHotpluggable...); !hot || kubevirt.StringAt(vol, kubevirt.VolumeClaim...) != claim {
			t.Errorf("VM volume %s %v, want claim %s hotpluggable", cd, vol, claim)
		}
		n.eventually(t, "volume "+cd+" Ready in the same running VMI", func(context.Context) error {
			vmi := n.sameVMI(t, booted)
			spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
			if got := vmcheck.Volumes(spec)[cd]; got != claim {
				return fmt.Errorf("VMI volume %s claim %q, want %s", cd, got, claim)
			}
			if p := vmcheck.VolumePhase(vmi, cd); p != "Ready" {
				return fmt.Errorf("VMI volumeStatus %s phase %q, want Ready", cd, p)
			}
			return nil
		})
		n.noRestartRequired(t)
		if got := n.redfishMedia(t); got["Inserted"] != true || got["Image"] != slot.Image {
			t.Errorf("System VirtualMedia cd0 Inserted %v Image %v, want true %s", got["Inserted"], got["Image"], slot.Image)
		}
	})
	n.step(t, "vmedia detach from the running VM: unplugged, no reboot", func() {
		n.vmedia(t, "detach", func() error { return s.api.DetachVMedia(t.Context(), n.uuid, "cdrom") })
		n.eventually(t, "volume "+cd+" unplugged from the same running VMI, its PVC gone", func(ctx context.Context) error {
			vmi := n.sameVMI(t, booted)
			spec, _, _ := unstructured.NestedMap(vmi.Object, "spec")
			if got, ok := vmcheck.Volumes(spec)[cd]; ok {
				return fmt.Errorf("VMI still has volume %s (claim %q)", cd, got)
			}
			if p := vmcheck.VolumePhase(vmi, cd); p != "" {
				return fmt.Errorf("VMI volumeStatus %s phase %q", cd, p)
			}
			left, err := vmcheck.MediaObjects(ctx, n.kube, n.key, media.DefaultSlot)
			if err != nil {
				return err
			}
			if len(left) > 0 {
				return fmt.Errorf("left behind: %v", left)
			}
			return nil
		})
		vm := n.vm(t)
		if err := emptyDrive(vm); err != nil {
			t.Error(err)
		}
		if slot := vmcheck.MustSlot(t, vm, media.DefaultSlot); slot.Phase != system.MediaEmpty {
			t.Errorf("slot %+v after the detach, want empty", slot)
		}
		n.noRestartRequired(t)
		if got := n.redfishMedia(t); got["Inserted"] != false {
			t.Errorf("System VirtualMedia cd0 Inserted %v after the detach, want false", got["Inserted"])
		}
		if got := n.get(t); got.ProvisionState != "active" || str(got.PowerState) != "power on" || str(got.LastError) != "" {
			t.Errorf("node after attach and detach: %s, want active, power on, no error", got.Summary())
		}
	})
	n.checkFields(t)
}

// vmedia sends an attach or detach (call) and waits until the conductor
// has done it (Ironic answers 204 and works on holding the node's lock):
// the node stable with no last_error.
func (n *node) vmedia(t *testing.T, what string, call func() error) {
	t.Helper()
	if err := call(); err != nil {
		t.Fatalf("vmedia %s %s: %v", what, n.key, err)
	}
	got := n.wait(t, "vmedia "+what, func(x ironicproc.Node) bool { return x.Stable() })
	if str(got.LastError) != "" {
		t.Fatalf("vmedia %s: %s, want no last_error", what, got.Summary())
	}
}

// eventually waits up to stepTimeout for cond.
func (n *node) eventually(t *testing.T, what string, cond func(context.Context) error) {
	t.Helper()
	testutil.Eventually(t, what, stepTimeout, 200*time.Millisecond, cond)
}

// sameVMI reads the VMI, failing the test at once unless it is the
// running one with UID uid (no reboot happened).
func (n *node) sameVMI(t *testing.T, uid types.UID) *unstructured.Unstructured {
	t.Helper()
	vmi := n.vmi(t)
	if !running(vmi) || vmi.GetUID() != uid {
		var got types.UID
		if vmi != nil {
			got = vmi.GetUID()
		}
		t.Fatalf("VMI %q phase %q, want the running VMI %s (the VM rebooted)", got, vmcheck.Phase(vmi), uid)
	}
	return vmi
}

// noRestartRequired fails t if the VM carries RestartRequired True.
func (n *node) noRestartRequired(t *testing.T) {
	t.Helper()
	if c := kubevirt.VMConditionOf(n.vm(t), kubevirt.ConditionRestartRequired); c.True() {
		t.Errorf("VM %s RestartRequired: %+v", n.key, c)
	}
}

// redfishMedia reads the System's VirtualMedia cd0 from the bridge.
func (n *node) redfishMedia(t *testing.T) map[string]any {
	t.Helper()
	c := testutil.Redfish{Base: n.env.URL, User: n.env.User, Password: n.env.Password, HTTP: testutil.Insecure()}
	r := c.Do(t, http.MethodGet, "/redfish/v1/Systems/"+n.key.ID()+"/VirtualMedia/"+media.DefaultSlot, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET System VirtualMedia %s: %d %s", media.DefaultSlot, r.Status, r.Body)
	}
	return r.JSON(t)
}

// emptyDrive checks that the VM's template has cd0's CD-ROM drive and no
// volume for it.
func emptyDrive(vm *unstructured.Unstructured) error {
	spec := kubevirt.TemplateSpecOf(vm)
	cd := apply.DiskName(media.DefaultSlot)
	if !hasCDROM(spec, cd) {
		return fmt.Errorf("template disks %+v: want the %s CD-ROM drive", vmcheck.Disks(spec), cd)
	}
	if claim, ok := vmcheck.Volumes(spec)[cd]; ok {
		return fmt.Errorf("template volume %s (claim %q): want the drive empty", cd, claim)
	}
	return nil
}

// hasCDROM reports whether spec has the CD-ROM disk name.
func hasCDROM(spec map[string]any, name string) bool {
	for _, d := range vmcheck.Disks(spec) {
		if d.Name == name && d.CDROM {
			return true
		}
	}
	return false
}

// volumeOf is the VM's template volume name, nil when there is none.
func volumeOf(vm *unstructured.Unstructured, name string) map[string]any {
	vols, _, _ := unstructured.NestedSlice(kubevirt.TemplateSpecOf(vm), "volumes")
	for _, v := range vols {
		if m, _ := v.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}
