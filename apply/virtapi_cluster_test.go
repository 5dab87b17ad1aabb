package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestVirtAPI runs the bridge's writes against KubeVirt's own admission
// webhooks (virt-api v1.9.0, testcluster Options.VirtAPI) on both CRD
// variants: its flows are admitted; the stale write the precondition
// prevents is one virt-api rejects (map lists) or admits as an empty
// CD-ROM (atomic lists); and what virt-api's mutator adds during the
// bridge's applies belongs to no field manager.
func TestVirtAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver, virt-controller and virt-api")
	}
	for _, v := range crds.Variants {
		t.Run(string(v), func(t *testing.T) {
			c := testcluster.ForTestWith(t, testcluster.Options{Variant: v, VirtAPI: true})
			t.Run("flows admitted", func(t *testing.T) { testVirtAPIFlows(t, newEnv(t, c)) })
			t.Run("stale boot write after an eject", func(t *testing.T) { testVirtAPIStaleBoot(t, newEnv(t, c)) })
			t.Run("mutator fields unowned", func(t *testing.T) { testVirtAPIMutatorOwnership(t, c, newEnv(t, c)) })
		})
	}
}

// testVirtAPIFlows: media insert, a Cd Once override (with rebootPolicy
// Terminate: KubeVirt's RebootPolicy gate is Beta, on by default), power on
// (runStrategy and a Start request in status), eject, and the override's
// end are all admitted by virt-api's webhooks.
func testVirtAPIFlows(t *testing.T, e *env) {
	ctx := t.Context()
	key, w := e.cdOnceVM(t, "flows")
	if got := kubevirt.RebootPolicyOf(e.get(t, key)); got != kubevirt.RebootPolicyTerminate {
		t.Errorf("rebootPolicy %q while Once is armed, want %s", got, kubevirt.RebootPolicyTerminate)
	}
	if n := w.RebootPolicyFallbacks(); n[FallbackRefused]+n[FallbackAuthor] != 0 {
		t.Errorf("rebootPolicy fallbacks %v with virt-api, want none", n)
	}
	if got := e.disks(t, key)[DiskName("cd0")]; got != "cdrom/1" {
		t.Errorf("%s is %q, want cdrom/1 (first to boot)", DiskName("cd0"), got)
	}
	noErr(t)(w.Power(ctx, key, func(_ *VM, p *PowerChange) error { p.RunStrategy = kubevirt.RunStrategyManual; return nil }))
	noErr(t)(w.StateChange(ctx, key, appendReq(kubevirt.StateChangeRequest{Action: kubevirt.StartRequest})))
	noErr(t)(w.Media(ctx, key, ejectSlot("cd0")))
	// The drive stays, empty: virt-api admits a CD-ROM without a volume.
	if _, ok := e.disks(t, key)[DiskName("cd0")]; !ok || slices.Contains(e.volumes(t, key), DiskName("cd0")) {
		t.Errorf("after eject: disks %v volumes %v, want the empty drive %s", e.disks(t, key), e.volumes(t, key), DiskName("cd0"))
	}
	e.setBoot(t, w, key, revertedBoot)
	if got := kubevirt.RebootPolicyOf(e.get(t, key)); got != "" {
		t.Errorf("rebootPolicy %q after the override ended, want none", got)
	}
	for m, n := range w.Stats() {
		if n.Failures != 0 {
			t.Errorf("%s: %d failed calls", m, n.Failures)
		}
	}
}

// cdOnceVM creates a VM, inserts media in cd0 and sets a Cd Once override
// through a new Writer, which it returns.
func (e *env) cdOnceVM(t *testing.T, name string) (system.Key, *Client) {
	t.Helper()
	key := e.createVM(t, name)
	w := New(e.bridge, nil, e.mode, Options{})
	noErr(t)(w.Media(t.Context(), key, setSlot(readySlot())))
	e.setBoot(t, w, key, cdOnceOverride)
	return key, w
}

// testVirtAPIStaleBoot is the race the precondition guards against: a boot
// layout computed from a read taken before an eject of a USB stick (a
// CD-ROM's drive stays, empty, on eject: build_hotplug.go). Through a
// client that strips the precondition (the negative control) the write
// lands on the ejected VM: in map mode it leaves {name: media-usb0,
// bootOrder} without a volume, in atomic mode its whole disks list brings
// the stick's disk back without its volume; virt-api rejects both (a disk
// that is not a CD-ROM needs a volume). With the precondition the write
// gets 409, re-reads and lays out the disks that are there.
func testVirtAPIStaleBoot(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "stale")
	w := New(e.bridge, nil, e.mode, Options{})
	usb := system.MediaSlot{Slot: "usb0", Image: "http://images/config.img", Phase: system.MediaReady, InsertID: "i-2", ClaimName: "stale-usb0"}
	noErr(t)(w.Media(ctx, key, setSlot(usb)))
	e.setBoot(t, w, key, cdOnceOverride)
	usb0 := DiskName("usb0")
	if got := e.disks(t, key)[usb0]; got == "" {
		t.Fatalf("disks %v: no %s", e.disks(t, key), usb0)
	}
	stale := e.get(t, key)
	noErr(t)(w.Media(ctx, key, ejectSlot("usb0")))
	hdd := setBoot(system.BootOverride{Target: system.BootHdd, Enabled: system.BootContinuous})

	nc := New(testutil.WithoutPrecondition(e.bridge), staleCache{stale}, e.mode, Options{})
	_, err := nc.Boot(ctx, key, hdd)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), testcluster.VirtAPIWebhookVM) ||
		!strings.Contains(err.Error(), ".Name '"+usb0+"' not found.") {
		t.Fatalf("stale boot write without precondition: err %v, want virt-api's denial of disk %s without a volume", err, usb0)
	}

	guarded := New(e.bridge, staleCache{stale}, e.mode, Options{})
	if _, err := guarded.Boot(ctx, key, hdd); err != nil {
		t.Fatalf("stale boot write with precondition: %v", err)
	}
	if got := guarded.Stats()[ManagerBoot]; got.Conflicts == 0 {
		t.Errorf("the guarded stale write saw no 409: %+v", got)
	}
	if _, ok := e.disks(t, key)[usb0]; ok {
		t.Errorf("disks after the guarded write %v: %s is back", e.disks(t, key), usb0)
	}
}

// testVirtAPIMutatorOwnership: virt-api's VM mutator fills defaults on
// every create and update it sees, the bridge's applies included, and the
// apiserver attributes them to nobody. A VM created before the mutator
// defaulted it (here: while the mutating webhook configuration was away,
// until virt-controller had written it too) gets architecture and
// machine.type at the bridge's next apply; they are not redfish-boot's, so
// no later apply of the bridge removes them.
func testVirtAPIMutatorOwnership(t *testing.T, c *testcluster.Cluster, e *env) {
	machine := kubevirt.TemplateSpec.Child("domain", "machine", "type")
	arch := kubevirt.TemplateSpec.Child("architecture")
	var key system.Key
	withoutVMMutator(t, c, func() {
		key = e.createVM(t, "legacy")
		// virt-controller's own first writes of the VM's metadata and spec
		// (api-version annotations, finalizer, firmware UUID) would
		// otherwise be the first to meet the mutator again.
		testutil.Eventually(t, "virt-controller's first sync of the VM", time.Minute, 50*time.Millisecond, func(ctx context.Context) error {
			vm, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Get(ctx, key.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(vm.GetFinalizers()) == 0 || len(vm.GetAnnotations()) == 0 || str(vm, kubevirt.FirmwareUUID) == "" {
				return fmt.Errorf("finalizers %v, annotations %v, firmware uuid %q", vm.GetFinalizers(), vm.GetAnnotations(), str(vm, kubevirt.FirmwareUUID))
			}
			return nil
		})
		// Checked while the mutator is still away: once it is back, any
		// write of the VM (virt-controller's next sync too) defaults it.
		if got := str(e.get(t, key), machine); got != "" {
			t.Fatalf("machine.type %q on a VM created without the mutator", got)
		}
	})
	w := New(e.bridge, nil, e.mode, Options{})
	e.setBoot(t, w, key, system.BootOverride{Target: system.BootHdd, Enabled: system.BootContinuous})
	vm := e.get(t, key)
	if got := str(vm, machine); got != "q35" {
		t.Errorf("machine.type %q after the bridge's apply, want q35 from virt-api's mutator", got)
	}
	if got := str(vm, arch); got != "amd64" {
		t.Errorf("architecture %q after the bridge's apply, want amd64 from virt-api's mutator", got)
	}
	owned, err := Owned(vm)
	if err != nil {
		t.Fatal(err)
	}
	for manager, set := range owned {
		for _, p := range Paths(set) {
			if strings.Contains(p, ".machine") || strings.HasSuffix(p, ".architecture") {
				t.Errorf("manager %s owns %s, want virt-api's defaults unowned", manager, p)
			}
		}
	}
	e.setBoot(t, w, key, revertedBoot)
	if got := str(e.get(t, key), machine); got != "q35" {
		t.Errorf("machine.type %q after the override ended, want q35 kept", got)
	}
}

func str(u *unstructured.Unstructured, path []string) string {
	v, _, _ := unstructured.NestedString(u.Object, path...)
	return v
}

// withoutVMMutator runs f while virt-api's mutating webhook configuration
// is away (waiting until the apiserver no longer calls it, and calls it
// again after).
func withoutVMMutator(t *testing.T, c *testcluster.Cluster, f func()) {
	t.Helper()
	ctx := t.Context()
	api := kubernetes.NewForConfigOrDie(c.Admin).AdmissionregistrationV1().MutatingWebhookConfigurations()
	saved, err := api.Get(ctx, testcluster.VirtAPIMutatorConfig, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Delete(ctx, saved.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMutator(t, c, false)
	f()
	saved.ResourceVersion = ""
	if _, err := api.Create(ctx, saved, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMutator(t, c, true)
}

// waitMutator waits until a dry-run VM create does (on) or does not get
// virt-api's machine type.
func waitMutator(t *testing.T, c *testcluster.Cluster, on bool) {
	t.Helper()
	probe := baseVM(t)
	probe.SetName("mutator-probe")
	probe.SetNamespace("default")
	probe.SetResourceVersion("")
	vms := dynamic.NewForConfigOrDie(c.Admin).Resource(kubevirt.VirtualMachines).Namespace("default")
	testutil.Eventually(t, fmt.Sprintf("virt-api's VM mutator on=%t", on), time.Minute, 100*time.Millisecond, func(ctx context.Context) error {
		got, err := vms.Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if has := str(got, kubevirt.TemplateSpec.Child("domain", "machine", "type")) != ""; has != on {
			return fmt.Errorf("machine type defaulted: %t", has)
		}
		return nil
	})
}
