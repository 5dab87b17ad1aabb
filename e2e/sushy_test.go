package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/sim"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// sushyResult is what the sushy_ironic*.py scripts print.
type sushyResult struct {
	Systems map[string]map[string]any `json:"systems"`
	Errors  map[string]string         `json:"errors"`
}

// TestSushyVirtualMediaProvisioning runs Ironic 21's virtual-media
// provisioning (CD boot, then deploy: boot from disk; media through the
// Manager) with each real sushy library ([sushyLibs]) on three VMs at once,
// with session and with Basic auth, and checks the Kubernetes objects it
// left after each half. The libraries take turns on the same VMs.
func TestSushyVirtualMediaProvisioning(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		forEachSushy(t, func(t *testing.T, lib sushyLib) {
			start := time.Now()
			for n, mode := range []string{"session", "basic"} {
				vms := []int{vmSushyFirst + 3*n, vmSushyFirst + 3*n + 1, vmSushyFirst + 3*n + 2}
				t.Run(mode, func(t *testing.T) { sushyProvision(t, lib, env, mode, vms) })
			}
			t.Logf("TIMING sushy %s Ironic 21 provisioning (session and basic, 6 VMs): %s", lib.Version, time.Since(start).Round(time.Millisecond))
		})
	})
}

func sushyProvision(t *testing.T, lib sushyLib, env *demo.Env, mode string, vms []int) {
	a := adminFor(t, env)
	order := recordOrder(t, a)
	before := env.Sim.Counters()
	image := imageURL(env, "boot.iso")

	start := time.Now()
	cd := runSushy(t, lib, env, "sushy_ironic21.py", mode, "cd", image, vms)
	t.Logf("TIMING sushy %s %s CD boot of %d VMs at once: %s", lib.Version, mode, len(vms), time.Since(start).Round(time.Millisecond))
	cdVMIs := map[int]types.UID{}
	for _, i := range vms {
		got := cd.Systems[sysID(i)]
		want := map[string]any{
			"session":               mode == "session",
			"boot_before_on":        []any{"Cd", "Once", "UEFI"},
			"media_when_on":         []any{image, true},
			"boot_after_first_boot": []any{"None", "Disabled", "UEFI"},
			"power":                 "On",
		}
		if diff := cmp.Diff(want, withoutSteps(got)); diff != "" {
			t.Errorf("%s: what sushy saw in the CD boot (-want +got):\n%s", sysID(i), diff)
		}
		t.Logf("%s CD boot steps (s): %v", sysID(i), got["steps"])
		cdVMIs[i] = checkCDBooted(t, a, env, order, i, image)
	}

	start = time.Now()
	deploy := runSushy(t, lib, env, "sushy_ironic21.py", mode, "deploy", image, vms)
	t.Logf("TIMING sushy %s %s deploy (eject, Hdd/Continuous, reboot) of %d VMs at once: %s", lib.Version, mode, len(vms), time.Since(start).Round(time.Millisecond))
	for _, i := range vms {
		got := deploy.Systems[sysID(i)]
		want := map[string]any{
			"media_after_eject": []any{nil, false},
			"boot":              []any{"Hdd", "Continuous", "UEFI"},
			"power":             "On",
		}
		if diff := cmp.Diff(want, withoutSteps(got)); diff != "" {
			t.Errorf("%s: what sushy saw in the deploy (-want +got):\n%s", sysID(i), diff)
		}
		t.Logf("%s deploy steps (s): %v", sysID(i), got["steps"])
		checkDeployed(t, a, i, cdVMIs[i])
	}
	checkImports(t, env, before, len(vms))
}

// checkCDBooted checks VM i after a CD boot of image: its running VMI
// boots the media CD-ROM first with the slot's PVC paired, the slot is
// Ready with image, whose bytes were imported before the VMI was created.
// It returns the VMI's UID.
func checkCDBooted(t *testing.T, a admin, env *demo.Env, order *orderRecorder, i int, image string) types.UID {
	t.Helper()
	vmi := a.waitRunning(t, i)
	spec := vmiSpec(t, vmi)
	first := disks(t, spec)
	if len(first) == 0 || first[0].Name != mediaDisk() || !first[0].CDROM || first[0].BootOrder == 0 {
		t.Errorf("%s: VMI disks by boot order %+v: want the %s CD-ROM first", vmName(i), first, mediaDisk())
	}
	if got := volumes(t, spec)[mediaDisk()]; got != claimOf(i) {
		t.Errorf("%s: VMI volume %s claim %q, want %q (disk and volume paired)", vmName(i), mediaDisk(), got, claimOf(i))
	}
	vm := a.vm(t.Context(), t, i)
	s := slot(t, vm)
	if s.Phase != system.MediaReady || s.Image != image {
		t.Errorf("%s: slot %+v, want Ready with %s", vmName(i), s, image)
	}
	created := vmi.GetCreationTimestamp().Time
	if created.Before(s.Since.Truncate(time.Second)) {
		t.Errorf("%s: VMI created at %s, before the import was Ready at %s", vmName(i), created, s.Since)
	}
	readyRV, vmiRV := order.revisions(vmName(i))
	if readyRV == 0 || vmiRV == 0 || vmiRV < readyRV {
		t.Errorf("%s: slot Ready at revision %d, VMI created at revision %d: want Ready first", vmName(i), readyRV, vmiRV)
	}
	t.Logf("%s: slot Ready at revision %d, VMI created at revision %d, power-on deferred behind the import: %v",
		vmName(i), readyRV, vmiRV, order.wasDeferred(vmName(i)))
	if got, want := fileSHA256(t, env.Sim.ImagePath(demo.VMNamespace, s.ClaimName)), env.Images.SHA256["boot.iso"]; got != want {
		t.Errorf("%s: imported image sha256 %s, want %s (boot.iso)", vmName(i), got, want)
	}
	return vmi.GetUID()
}

// checkDeployed checks VM i after eject and a reboot from disk: a new VMI
// (not cdVMI) with the root disk and the slot's empty drive, the VM's
// template the same, the slot empty and its import objects gone.
func checkDeployed(t *testing.T, a admin, i int, cdVMI types.UID) {
	t.Helper()
	vmi := a.waitRunning(t, i)
	if vmi.GetUID() == cdVMI {
		t.Errorf("%s: still the CD boot's VMI %s after the reboot", vmName(i), vmi.GetUID())
	}
	if spec := vmiSpec(t, vmi); !rootAndEmptyDrives(disks(t, spec), volumes(t, spec)) {
		t.Errorf("%s: VMI disks %+v, volumes %v, want rootdisk and empty CD drives only", vmName(i), disks(t, spec), volumes(t, spec))
	}
	vm := a.vm(t.Context(), t, i)
	tmpl := templateSpec(t, vm)
	if ds, v := disks(t, tmpl), volumes(t, tmpl); !rootAndEmptyDrives(ds, v) {
		t.Errorf("%s: VM disks %+v, volumes %v, want rootdisk and empty CD drives only", vmName(i), ds, v)
	}
	if s := slot(t, vm); s.Phase != system.MediaEmpty {
		t.Errorf("%s: slot %+v after eject, want empty", vmName(i), s)
	}
	waitFor(t, vmName(i)+" import pods and PVC gone", func() (bool, string) {
		left := a.mediaObjects(t.Context(), t, i)
		return len(left) == 0, strings.Join(left, ", ")
	})
}

// checkImports checks the simulator's counters since before: one import
// per VM, none refused with Multi-Attach, no corrupted VM.
func checkImports(t *testing.T, env *demo.Env, before sim.Counters, vms int) {
	t.Helper()
	after := env.Sim.Counters()
	if n := after.MultiAttachRefusals - before.MultiAttachRefusals; n != 0 {
		t.Errorf("%d import pods refused with Multi-Attach: a VM started on an unfinished import", n)
	}
	if n := after.ImportsSucceeded - before.ImportsSucceeded; n != int64(vms) {
		t.Errorf("%d imports succeeded, want %d (one per insert)", n, vms)
	}
	for _, c := range env.Sim.Corruptions() {
		t.Errorf("simulator saw a corrupted VM: %+v", c)
	}
}

// runSushy runs one phase of script on the given VMs at once.
func runSushy(t *testing.T, lib sushyLib, env *demo.Env, script, mode, phase, image string, vms []int) sushyResult {
	t.Helper()
	args := []string{phase}
	for _, i := range vms {
		args = append(args, sysID(i))
	}
	var res sushyResult
	runSushyScript(t, lib, env, script, args, []string{"RF_AUTH=" + mode, "RF_IMAGE=" + image}, &res)
	for id, e := range res.Errors {
		t.Errorf("sushy %s %s %s %s on %s failed:\n%s", lib.Version, script, mode, phase, id, e)
	}
	if t.Failed() {
		t.FailNow()
	}
	return res
}

func withoutSteps(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "steps" {
			out[k] = v
		}
	}
	return out
}
