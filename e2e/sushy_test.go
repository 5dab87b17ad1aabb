package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/demo"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// sushyPython is the interpreter that has python3-sushy (Debian's).
const sushyPython = "/usr/bin/python3"

// sushyResult is what ironic_vmedia.py prints.
type sushyResult struct {
	Systems map[string]map[string]any `json:"systems"`
	Errors  map[string]string         `json:"errors"`
}

// TestSushyVirtualMediaProvisioning runs Ironic's virtual-media
// provisioning (CD boot, then deploy: boot from disk) with the real sushy
// library on three VMs at once, with session and with Basic auth, and
// checks the Kubernetes objects it left after each half.
func TestSushyVirtualMediaProvisioning(t *testing.T) {
	if out, err := exec.CommandContext(t.Context(), sushyPython, "-c", "import sushy").CombinedOutput(); err != nil {
		t.Skipf("python3-sushy not importable by %s (%v: %s): skipping the sushy e2e", sushyPython, err, out)
	}
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		for n, mode := range []string{"session", "basic"} {
			vms := []int{vmSushyFirst + 3*n, vmSushyFirst + 3*n + 1, vmSushyFirst + 3*n + 2}
			t.Run(mode, func(t *testing.T) { sushyProvision(t, env, mode, vms) })
		}
	})
}

func sushyProvision(t *testing.T, env *demo.Env, mode string, vms []int) {
	a := adminFor(t, env)
	order := recordOrder(t, a)
	before := env.Sim.Counters()
	image := imageURL(env, "boot.iso")

	start := time.Now()
	cd := runSushy(t, env, mode, "cd", image, vms)
	t.Logf("TIMING sushy %s CD boot of %d VMs at once: %s", mode, len(vms), time.Since(start).Round(time.Millisecond))

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

		vmi := a.waitRunning(t, i)
		cdVMIs[i] = vmi.GetUID()
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
	}

	start = time.Now()
	deploy := runSushy(t, env, mode, "deploy", image, vms)
	t.Logf("TIMING sushy %s deploy (eject, Hdd/Continuous, reboot) of %d VMs at once: %s", mode, len(vms), time.Since(start).Round(time.Millisecond))
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

		vmi := a.waitRunning(t, i)
		if vmi.GetUID() == cdVMIs[i] {
			t.Errorf("%s: still the CD boot's VMI %s after the reboot", vmName(i), vmi.GetUID())
		}
		spec := vmiSpec(t, vmi)
		if ds := disks(t, spec); len(ds) != 1 || ds[0].Name != "rootdisk" {
			t.Errorf("%s: VMI disks %+v, want only rootdisk", vmName(i), ds)
		}
		vm := a.vm(t.Context(), t, i)
		tmpl := templateSpec(t, vm)
		if ds := disks(t, tmpl); len(ds) != 1 || ds[0].Name != "rootdisk" {
			t.Errorf("%s: VM disks %+v, want only rootdisk", vmName(i), ds)
		}
		if v := volumes(t, tmpl); len(v) != 1 {
			t.Errorf("%s: VM volumes %v, want only rootdisk", vmName(i), v)
		}
		if s := slot(t, vm); s.Phase != system.MediaEmpty {
			t.Errorf("%s: slot %+v after eject, want empty", vmName(i), s)
		}
		waitFor(t, vmName(i)+" import pods and PVC gone", func() (bool, string) {
			left := a.mediaObjects(t.Context(), t, i)
			return len(left) == 0, strings.Join(left, ", ")
		})
	}
	after := env.Sim.Counters()
	if n := after.MultiAttachRefusals - before.MultiAttachRefusals; n != 0 {
		t.Errorf("%d import pods refused with Multi-Attach: a VM started on an unfinished import", n)
	}
	if n := after.ImportsSucceeded - before.ImportsSucceeded; n != int64(len(vms)) {
		t.Errorf("%d imports succeeded, want %d (one per insert)", n, len(vms))
	}
	for _, c := range env.Sim.Corruptions() {
		t.Errorf("simulator saw a corrupted VM: %+v", c)
	}
}

// runSushy runs one phase of ironic_vmedia.py on the given VMs at once.
func runSushy(t *testing.T, env *demo.Env, mode, phase, image string, vms []int) sushyResult {
	t.Helper()
	args := []string{"testdata/ironic_vmedia.py", phase}
	for _, i := range vms {
		args = append(args, sysID(i))
	}
	cmd := exec.CommandContext(t.Context(), sushyPython, args...)
	cmd.Env = append(pythonEnviron(), "RF_URL="+env.URL, "RF_USER="+env.User, "RF_PASSWORD="+env.Password,
		"RF_AUTH="+mode, "RF_IMAGE="+image)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res sushyResult
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		t.Fatalf("sushy %s %s: %v; output %q: %v\nstderr:\n%s", mode, phase, err, out, jerr, tail(stderr.String()))
	}
	for id, e := range res.Errors {
		t.Errorf("sushy %s %s on %s failed:\n%s", mode, phase, id, e)
	}
	if err != nil || len(res.Errors) > 0 {
		t.Fatalf("sushy %s %s: %v\nstderr:\n%s", mode, phase, err, tail(stderr.String()))
	}
	return res
}

// pythonEnviron is os.Environ without REQUESTS_CA_BUNDLE and
// CURL_CA_BUNDLE: python-requests lets them override a session's
// verify=False, and the demo's certificate is self-signed.
func pythonEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REQUESTS_CA_BUNDLE=") && !strings.HasPrefix(kv, "CURL_CA_BUNDLE=") {
			out = append(out, kv)
		}
	}
	return out
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

// tail is the last 4 KiB of s.
func tail(s string) string {
	if len(s) > 4096 {
		return "..." + s[len(s)-4096:]
	}
	return s
}
