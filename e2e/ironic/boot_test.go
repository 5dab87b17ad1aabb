package ironic

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// bootDeviceScenario sets every boot device Ironic offers, one-time and
// persistent, and reads each back through Ironic and on the VM.
func bootDeviceScenario(t *testing.T, s *suite, v crds.Variant) {
	n := s.enroll(t, v, vmBoot, "ramdisk", nil)
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "supported boot devices", func() {
		got, err := s.api.SupportedBootDevices(t.Context(), n.uuid)
		if err != nil {
			t.Fatalf("supported boot devices: %v", err)
		}
		for _, want := range []string{"pxe", "disk", "cdrom"} {
			if !contains(got, want) {
				t.Errorf("supported boot devices %v: %s missing", got, want)
			}
		}
	})
	targets := map[string]system.BootTarget{"pxe": system.BootPxe, "disk": system.BootHdd, "cdrom": system.BootCd}
	for _, persistent := range []bool{false, true} {
		for _, dev := range []string{"pxe", "disk", "cdrom"} {
			name := "boot device " + dev + map[bool]string{false: " once", true: " persistent"}[persistent]
			n.step(t, name, func() {
				if err := s.api.SetBootDevice(t.Context(), n.uuid, dev, persistent); err != nil {
					t.Fatalf("set %s: %v", name, err)
				}
				got, err := s.api.GetBootDevice(t.Context(), n.uuid)
				if err != nil {
					t.Fatalf("get boot device after %s: %v", name, err)
				}
				if str(got.BootDevice) != dev || got.Persistent == nil || *got.Persistent != persistent {
					t.Errorf("%s: Ironic reads back %s persistent %v", name, str(got.BootDevice), deref(got.Persistent))
				}
				wantEnabled := system.BootOnce
				if persistent {
					wantEnabled = system.BootContinuous
				}
				if o := n.bootOverride(t); o.Target != targets[dev] || o.Enabled != wantEnabled {
					t.Errorf("%s: VM boot override %+v, want %s/%s", name, o, targets[dev], wantEnabled)
				}
			})
		}
	}
	n.checkFields(t)
}

// bootModeScenario switches boot mode and Secure Boot in both directions
// and both orders, as Ironic's API offers them, and injects an NMI, which
// KubeVirt cannot do. Its VM is a sample VM whose author wrote no
// firmware.bootloader; first, bios and back to uefi on a sample VM whose
// author wrote efi (the bridge removes the author's efi for Legacy).
func bootModeScenario(t *testing.T, s *suite, v crds.Variant) {
	authored := s.enroll(t, v, vmBootMode, "ramdisk", nil)
	authored.step(t, "manage", func() { authored.provision(t, "manage", "manageable", nil) })
	authored.step(t, "boot mode bios while the VM's author owns efi (the bridge removes it)", func() {
		authored.expect(t, authored.bootMode(t, "bios", ""))
	})
	authored.step(t, "boot mode uefi again on the authored VM", func() {
		authored.expect(t, authored.bootMode(t, "uefi", ""))
	})
	authored.checkFields(t)

	vm := demo.SampleVM(demo.VMNamespace, "ironic-boot-mode-"+strings.ReplaceAll(s.release.Name, ".", "-"))
	demo.SetGracePeriod(vm, gracePeriod)
	unstructured.RemoveNestedField(vm.Object, "spec", "template", "spec", "domain", "firmware", "bootloader")
	if _, err := authored.dyn.Resource(kubevirt.VirtualMachines).Namespace(demo.VMNamespace).Create(t.Context(), vm, metav1.CreateOptions{FieldManager: "demo-author"}); err != nil {
		t.Fatalf("create VM %s: %v", vm.GetName(), err)
	}
	authored.waitServed(t, demo.VMNamespace+"."+vm.GetName())
	n := s.enrollVM(t, v, vm.GetName(), "ramdisk", nil)
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "boot mode bios", func() { n.expect(t, n.bootMode(t, "bios", "")) })
	n.step(t, "secure boot on while bios (Ironic refuses)", func() {
		n.expect(t, n.secureBoot(t, true, "requires UEFI"))
	})
	n.step(t, "boot mode uefi", func() { n.expect(t, n.bootMode(t, "uefi", "")) })
	n.step(t, "secure boot on", func() { n.expect(t, n.secureBoot(t, true, "")) })
	n.step(t, "boot mode bios while secure boot on (the bridge refuses)", func() {
		n.expect(t, n.bootMode(t, "bios", "Setting boot mode to bios failed"))
	})
	n.step(t, "secure boot off", func() { n.expect(t, n.secureBoot(t, false, "")) })
	n.step(t, "boot mode bios after secure boot off", func() { n.expect(t, n.bootMode(t, "bios", "")) })
	n.step(t, "boot mode uefi again", func() { n.expect(t, n.bootMode(t, "uefi", "")) })
	n.step(t, "inject NMI (unsupported)", func() {
		nmis := n.rec.count(http.MethodPost, n.key.ID()+"/Actions/ComputerSystem.Reset")
		err := s.api.InjectNMI(t.Context(), n.uuid)
		if err == nil || !strings.Contains(err.Error(), "inject NMI failed") {
			t.Fatalf("inject NMI: %v, want Ironic's 'inject NMI failed' (KubeVirt cannot inject one)", err)
		}
		if got := n.get(t); got.Maintenance || !got.Stable() || str(got.LastError) != "" {
			t.Errorf("after the refused NMI: %s", got.Summary())
		}
		// Nmi is not among the advertised ResetTypes: sushy refuses it
		// before sending anything.
		if sent := n.rec.count(http.MethodPost, n.key.ID()+"/Actions/ComputerSystem.Reset") - nmis; sent != 0 {
			t.Errorf("Ironic sent %d reset(s) for the NMI: the bridge advertises Nmi (%v)", sent, err)
		}
	})
	n.checkFields(t)
}

// expect fails the test with each problem.
func (n *node) expect(t *testing.T, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
}

// bootMode asks Ironic for mode; wantErr "" means it must take effect,
// otherwise last_error must contain wantErr and the mode stay. It returns
// what went wrong.
func (n *node) bootMode(t *testing.T, mode, wantErr string) []string {
	t.Helper()
	before := n.get(t)
	if err := n.s.api.SetBootMode(t.Context(), n.uuid, mode); err != nil {
		t.Fatalf("set boot mode %s: %v", mode, err)
	}
	got := n.wait(t, "boot mode "+mode, func(x ironicproc.Node) bool { return x.Stable() })
	problems := outcome(t, "boot mode "+mode, got, wantErr)
	wantMode := mode
	if wantErr != "" {
		wantMode = str(before.BootMode)
	}
	if str(got.BootMode) != wantMode {
		problems = append(problems, fmt.Sprintf("boot mode %s: node boot_mode %q, want %q", mode, str(got.BootMode), wantMode))
	}
	wantVM := map[string]system.BootMode{"uefi": system.BootUEFI, "bios": system.BootLegacy}[wantMode]
	if o := n.bootOverride(t); wantErr != "" && o.Mode == system.BootLegacy {
		problems = append(problems, fmt.Sprintf("boot mode %s refused, yet the VM boot override %+v records Legacy", mode, o))
	} else if wantErr == "" && o.Mode != wantVM && (o.Mode != "" || wantVM != system.BootLegacy || n.efiInSpec(t)) {
		problems = append(problems, fmt.Sprintf("boot mode %s: VM boot override %+v, want mode %s", mode, o, wantVM))
	}
	return problems
}

// waitServed waits until the bridge serves system id (its cache has a VM
// created a moment ago).
func (n *node) waitServed(t *testing.T, id string) {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the demo's self-signed certificate
	}}
	deadline := time.Now().Add(stepTimeout)
	for {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, n.env.URL+"/redfish/v1/Systems/"+id, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(n.env.User, n.env.Password)
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bridge does not serve %s after %s (%v)", id, stepTimeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// efiInSpec reports whether the VM's template sets firmware.bootloader.efi
// (KubeVirt boots UEFI then, BIOS otherwise).
func (n *node) efiInSpec(t *testing.T) bool {
	t.Helper()
	_, found, _ := unstructured.NestedFieldNoCopy(n.vm(t).Object, "spec", "template", "spec", "domain", "firmware", "bootloader", "efi")
	return found
}

// secureBoot asks Ironic for Secure Boot on or off, like bootMode.
func (n *node) secureBoot(t *testing.T, on bool, wantErr string) []string {
	t.Helper()
	before := n.get(t)
	if err := n.s.api.SetSecureBoot(t.Context(), n.uuid, on); err != nil {
		t.Fatalf("set secure boot %v: %v", on, err)
	}
	what := map[bool]string{true: "secure boot on", false: "secure boot off"}[on]
	got := n.wait(t, what, func(x ironicproc.Node) bool { return x.Stable() })
	problems := outcome(t, what, got, wantErr)
	want := on
	if wantErr != "" {
		want = deref(before.SecureBoot)
	}
	if got.SecureBoot == nil || *got.SecureBoot != want {
		problems = append(problems, fmt.Sprintf("%s: node secure_boot %v, want %v", what, got.SecureBoot, want))
	}
	wantVM := map[bool]system.SecureBoot{true: system.SecureBootEnabled, false: system.SecureBootDisabled}[want]
	if o := n.bootOverride(t); o.SecureBoot != wantVM && (o.SecureBoot != "" || want) {
		problems = append(problems, fmt.Sprintf("%s: VM boot override %+v, want Secure Boot %s", what, o, wantVM))
	}
	return problems
}

// outcome checks last_error: empty when wantErr is "", containing wantErr
// otherwise.
func outcome(t *testing.T, what string, got ironicproc.Node, wantErr string) []string {
	t.Helper()
	le := str(got.LastError)
	switch {
	case wantErr == "" && le != "":
		return []string{fmt.Sprintf("%s failed: %s", what, le)}
	case wantErr != "" && !strings.Contains(le, wantErr):
		return []string{fmt.Sprintf("%s: last_error %q, want it to contain %q", what, le, wantErr)}
	case wantErr != "":
		t.Logf("%s refused as expected: %s", what, le)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func deref(b *bool) bool { return b != nil && *b }
