package power

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestSecureBoot drives SetSecureBoot and SetBoot on a real kube-apiserver
// with KubeVirt's virt-controller and the simulated node, once per CRD
// variant.
func TestSecureBoot(t *testing.T) {
	eachVariant(t, func(t *testing.T, _ crds.Variant, c *testcluster.Cluster) {
		t.Run("UEFI only, survives a Once revert", func(t *testing.T) { testSecureBoot(t, startEnv(t, c)) })
		t.Run("author's efi counts as UEFI", func(t *testing.T) { testSecureBootAuthorEFI(t, startEnv(t, c)) })
		t.Run("Legacy over the author's efi", func(t *testing.T) { testLegacyAuthorEFI(t, startEnv(t, c)) })
		t.Run("UEFI keeps the author's Secure Boot", func(t *testing.T) { testUEFIKeepsSecureBoot(t, startEnv(t, c)) })
	})
}

// firmware is efi.secureBoot, features.smm.enabled and bios presence of a
// VM spec, "-" for absent.
func firmware(vm *apply.VM) string {
	spec := vm.Object.Object
	get := func(p ...string) string {
		v, ok, _ := unstructured.NestedFieldNoCopy(spec, append([]string{"spec", "template", "spec", "domain"}, p...)...)
		if !ok {
			return "-"
		}
		return fmt.Sprint(v)
	}
	return "secureBoot=" + get("firmware", "bootloader", "efi", "secureBoot") + " smm=" + get("features", "smm", "enabled") +
		" bios=" + get("firmware", "bootloader", "bios")
}

func testSecureBoot(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "sb")
	check := func(step, want string, wantSB system.SecureBoot) {
		t.Helper()
		vm := e.live(t, key)
		if got := firmware(vm); got != want {
			t.Errorf("%s: %s, want %s", step, got, want)
		}
		if vm.Boot.SecureBoot != wantSB {
			t.Errorf("%s: recorded secure boot %q, want %q", step, vm.Boot.SecureBoot, wantSB)
		}
	}
	// A VM without a bootloader boots BIOS: secure boot is refused.
	if _, err := e.s.SetSecureBoot(ctx, key, true); !errors.Is(err, apply.ErrInvalid) {
		t.Fatalf("secure boot on a BIOS VM: %v, want ErrInvalid", err)
	}
	check("refused on BIOS", "secureBoot=- smm=- bios=-", "")

	if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Mode: ptrTo(system.BootUEFI)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.SetSecureBoot(ctx, key, true); err != nil {
		t.Fatal(err)
	}
	check("on", "secureBoot=true smm=true bios=-", system.SecureBootEnabled)

	if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Mode: ptrTo(system.BootLegacy)}); !errors.Is(err, apply.ErrInvalid) {
		t.Fatalf("Legacy while secure boot is on: %v, want ErrInvalid", err)
	}
	check("Legacy refused", "secureBoot=true smm=true bios=-", system.SecureBootEnabled)

	// A Once override reverts after one boot and keeps the firmware.
	e.setSlot(t, key, ready)
	if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Target: ptrTo(system.BootCd), Enabled: ptrTo(system.BootOnce)}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Reset(ctx, key, system.ResetOn); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, key, "booted and override reverted", func(vm *apply.VM) bool {
		return State(vm) == system.PowerOn && vm.Boot.Enabled == system.BootDisabled
	})
	check("after Once revert", "secureBoot=true smm=true bios=-", system.SecureBootEnabled)

	if _, err := e.s.SetSecureBoot(ctx, key, false); err != nil {
		t.Fatal(err)
	}
	check("off", "secureBoot=false smm=- bios=-", system.SecureBootDisabled)
	if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Mode: ptrTo(system.BootLegacy)}); err != nil {
		t.Fatalf("Legacy once secure boot is off: %v", err)
	}
	check("Legacy", "secureBoot=- smm=- bios=map[]", system.SecureBootDisabled)
}

// testSecureBootAuthorEFI: with no mode recorded, a VM whose author wrote
// efi boots UEFI; enabling secure boot records UEFI so redfish-boot writes
// the bootloader.
func testSecureBootAuthorEFI(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createEFIVM(t, "efi")
	if _, err := e.s.SetSecureBoot(ctx, key, true); err != nil {
		t.Fatalf("secure boot on an efi VM: %v", err)
	}
	got := e.live(t, key)
	if f := firmware(got); f != "secureBoot=true smm=true bios=-" {
		t.Errorf("firmware %s", f)
	}
	if got.Boot.Mode != system.BootUEFI || got.Boot.SecureBoot != system.SecureBootEnabled {
		t.Errorf("recorded override %+v, want mode UEFI, secure boot Enabled", got.Boot)
	}
}

// createEFIVM creates a VM whose author (test-author, an Update manager)
// wrote firmware.bootloader.efi {secureBoot: false}, as the demo VMs are.
func (e *env) createEFIVM(t *testing.T, name string) system.Key {
	t.Helper()
	u := testutil.VM(e.ns, name, "Halted")
	if err := unstructured.SetNestedMap(u.Object, map[string]any{"efi": map[string]any{"secureBoot": false}}, "spec", "template", "spec", "domain", "firmware", "bootloader"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Create(t.Context(), u, metav1.CreateOptions{FieldManager: "test-author"}); err != nil {
		t.Fatal(err)
	}
	return system.Key{Namespace: e.ns, Name: name}
}

// testLegacyAuthorEFI: KubeVirt boots UEFI while efi is set, and an apply
// cannot remove the author's efi: Legacy has the Writer remove it first,
// on a fresh VM and after Secure Boot went on and off (the sequence that
// made the apiserver reject efi: null when the apply forced the leaves),
// and the VM boots Legacy; UEFI afterwards is redfish-boot's efi.
func testLegacyAuthorEFI(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createEFIVM(t, "efi-legacy")
	set := func(step string, mode system.BootMode, want string) {
		t.Helper()
		if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Mode: ptrTo(mode)}); err != nil {
			t.Fatalf("%s: %s over the author's efi: %v", step, mode, err)
		}
		if got := firmware(e.live(t, key)); got != want {
			t.Errorf("%s: firmware %s after %s, want %s", step, got, mode, want)
		}
	}
	set("fresh VM", system.BootLegacy, "secureBoot=- smm=- bios=map[]")
	set("back", system.BootUEFI, "secureBoot=false smm=- bios=-")
	key = e.createEFIVM(t, "efi-legacy-sb")
	for _, on := range []bool{true, false} {
		if _, err := e.s.SetSecureBoot(ctx, key, on); err != nil {
			t.Fatalf("secure boot %v: %v", on, err)
		}
	}
	set("after Secure Boot on, off", system.BootLegacy, "secureBoot=- smm=- bios=map[]")
}

// testUEFIKeepsSecureBoot: BootSourceOverrideMode UEFI on a VM whose author
// wrote efi with KubeVirt's default Secure Boot (and SMM) leaves Secure
// Boot on: setting the mode the VM already boots changes nothing else.
func testUEFIKeepsSecureBoot(t *testing.T, e *env) {
	ctx := t.Context()
	u := testutil.VM(e.ns, "efi-sb", "Halted")
	domain := []string{"spec", "template", "spec", "domain"}
	if err := unstructured.SetNestedMap(u.Object, map[string]any{"efi": map[string]any{}}, append(domain, "firmware", "bootloader")...); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedMap(u.Object, map[string]any{"enabled": true}, append(domain, "features", "smm")...); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Create(ctx, u, metav1.CreateOptions{FieldManager: "test-author"}); err != nil {
		t.Fatal(err)
	}
	key := system.Key{Namespace: e.ns, Name: "efi-sb"}
	if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Mode: ptrTo(system.BootUEFI)}); err != nil {
		t.Fatalf("UEFI: %v", err)
	}
	vm := e.live(t, key)
	if mode, secure := vm.Firmware(); mode != system.BootUEFI || !secure {
		t.Errorf("after UEFI the VM boots %s, Secure Boot %v (firmware %s); want UEFI with Secure Boot", mode, secure, firmware(vm))
	}
	// Legacy is refused while that Secure Boot is on, efi left as it is.
	_, err := e.s.SetBoot(ctx, key, system.BootPatch{Mode: ptrTo(system.BootLegacy)})
	if refused, ok := errors.AsType[*apply.RefusedError](err); !ok || refused.ConflictsWith != apply.PropertySecureBoot {
		t.Errorf("Legacy under the author's Secure Boot: %v, want a refusal in conflict with %s", err, apply.PropertySecureBoot)
	}
	if mode, secure := e.live(t, key).Firmware(); mode != system.BootUEFI || !secure {
		t.Errorf("after the refused Legacy the VM boots %s, Secure Boot %v", mode, secure)
	}
}
