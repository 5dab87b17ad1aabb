package power

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestResetFirmware drives ResetFirmware (Bios.ResetBios) on a real
// kube-apiserver with KubeVirt's virt-controller, once per CRD variant:
// redfish-boot lets go of every firmware field it wrote, the VM boots its
// author's firmware (or KubeVirt's default) again, and a boot override
// stays.
func TestResetFirmware(t *testing.T) {
	eachVariant(t, func(t *testing.T, _ crds.Variant, c *testcluster.Cluster) {
		e := startEnv(t, c)
		t.Run("no authored bootloader", func(t *testing.T) { testResetFirmwareDefault(t, e) })
		t.Run("author's efi", func(t *testing.T) { testResetFirmwareAuthorEFI(t, e) })
		t.Run("author's efi after Secure Boot on", func(t *testing.T) { testResetFirmwareAuthorSecureBoot(t, e) })
	})
}

// bootOwned lists the firmware and smm paths redfish-boot owns on vm.
func bootOwned(t *testing.T, vm *apply.VM) []string {
	t.Helper()
	owned, err := apply.Owned(vm.Object)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if set := owned[apply.ManagerBoot]; set != nil {
		set.Iterate(func(p fieldpath.Path) {
			if s := p.String(); strings.Contains(s, ".firmware") || strings.Contains(s, ".smm") {
				out = append(out, s)
			}
		})
	}
	slices.Sort(out)
	return out
}

// testResetFirmwareDefault: a VM whose author wrote no bootloader, set to
// UEFI with Secure Boot and a continuous Cd override, boots Legacy without
// Secure Boot (KubeVirt's default) after the reset, and keeps the override.
func testResetFirmwareDefault(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createVM(t, "reset-default")
	e.setSlot(t, key, ready)
	if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Mode: ptrTo(system.BootUEFI), Target: ptrTo(system.BootCd), Enabled: ptrTo(system.BootContinuous)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.SetSecureBoot(ctx, key, true); err != nil {
		t.Fatal(err)
	}
	if got := firmware(e.live(t, key)); got != "secureBoot=true smm=true bios=-" {
		t.Fatalf("before the reset: %s", got)
	}
	if _, err := e.s.ResetFirmware(ctx, key); err != nil {
		t.Fatal(err)
	}
	vm := e.live(t, key)
	if got, want := firmware(vm), "secureBoot=- smm=- bios=-"; got != want {
		t.Errorf("after the reset: %s, want %s", got, want)
	}
	if mode, secure := vm.Firmware(); mode != system.BootLegacy || secure {
		t.Errorf("after the reset the VM boots %s, Secure Boot %v; want KubeVirt's default, Legacy without", mode, secure)
	}
	if owned := bootOwned(t, vm); len(owned) != 0 {
		t.Errorf("redfish-boot still owns %v", owned)
	}
	if want := (system.BootOverride{Target: system.BootCd, Enabled: system.BootContinuous}); vm.Boot != want {
		t.Errorf("override %+v, want %+v (the reset keeps the boot override)", vm.Boot, want)
	}
	if !apply.Settled(vm) {
		t.Errorf("boot orders not laid out for the kept Cd override")
	}
}

// testResetFirmwareAuthorEFI: a VM whose author wrote efi {secureBoot:
// false}, set to UEFI by a client (redfish-boot then owns efi.secureBoot
// beside the author, same value), is back to the author's efi after the
// reset: UEFI without Secure Boot, nothing of it redfish-boot's.
func testResetFirmwareAuthorEFI(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createEFIVM(t, "reset-efi")
	e.eventually(t, key, "in the cache", func(*apply.VM) bool { return true })
	if _, err := e.s.SetBoot(ctx, key, system.BootPatch{Mode: ptrTo(system.BootUEFI)}); err != nil {
		t.Fatal(err)
	}
	if owned := bootOwned(t, e.live(t, key)); len(owned) == 0 {
		t.Fatalf("redfish-boot owns no firmware field after UEFI")
	}
	if _, err := e.s.ResetFirmware(ctx, key); err != nil {
		t.Fatal(err)
	}
	vm := e.live(t, key)
	if got, want := firmware(vm), "secureBoot=false smm=- bios=-"; got != want {
		t.Errorf("after the reset: %s, want the author's %s", got, want)
	}
	if owned := bootOwned(t, vm); len(owned) != 0 {
		t.Errorf("redfish-boot still owns %v", owned)
	}
	if vm.Boot != (system.BootOverride{}) {
		t.Errorf("override %+v, want none", vm.Boot)
	}
}

// testResetFirmwareAuthorSecureBoot: Secure Boot enabled by a client on a
// VM whose author wrote efi {secureBoot: false} (Ironic's sequence on the
// demo VMs) moves efi.secureBoot to redfish-boot alone; the author keeps
// efi. Releasing that leaf would empty efi, which the CRD refuses as null
// (the reset failed): the reset keeps UEFI with Secure Boot off, and
// releases SMM.
func testResetFirmwareAuthorSecureBoot(t *testing.T, e *env) {
	ctx := t.Context()
	key := e.createEFIVM(t, "reset-efi-sb")
	e.eventually(t, key, "in the cache", func(*apply.VM) bool { return true })
	if _, err := e.s.SetSecureBoot(ctx, key, true); err != nil {
		t.Fatal(err)
	}
	if got := firmware(e.live(t, key)); got != "secureBoot=true smm=true bios=-" {
		t.Fatalf("before the reset: %s", got)
	}
	if _, err := e.s.ResetFirmware(ctx, key); err != nil {
		t.Fatalf("reset after Secure Boot on the author's efi: %v", err)
	}
	vm := e.live(t, key)
	if got, want := firmware(vm), "secureBoot=false smm=- bios=-"; got != want {
		t.Errorf("after the reset: %s, want %s", got, want)
	}
	if got, want := bootOwned(t, vm), []string{".spec.template.spec.domain.firmware.bootloader.efi.secureBoot"}; !slices.Equal(got, want) {
		t.Errorf("redfish-boot owns %v, want %v", got, want)
	}
	if want := (system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootDisabled}); vm.Boot != want {
		t.Errorf("override %+v, want %+v", vm.Boot, want)
	}
}
