package apply

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestLegacyReleasesAuthorEFI switches, on a real kube-apiserver and once
// per CRD variant, a VM whose author applied firmware.bootloader.efi to
// Legacy through redfish-boot: efi is removed (the author owns nothing of
// it any more), redfish-boot owns bootloader.bios and nothing under an
// Update entry; the author's next apply still merges; a removal decided on
// a stale read is a 409 and Boot retries it from a live read.
func TestLegacyReleasesAuthorEFI(t *testing.T) {
	forEachVariant(t, func(t *testing.T, c *testcluster.Cluster) {
		t.Run("switch and ownership", func(t *testing.T) { testLegacyReleasesAuthorEFI(t, newEnv(t, c)) })
		t.Run("stale read", func(t *testing.T) { testLegacyReleaseStale(t, newEnv(t, c)) })
	})
}

var (
	efiPath  = path(kubevirt.EFI)
	biosPath = path(append(append([]string(nil), kubevirt.Bootloader...), kubevirt.KeyBIOS))
)

// legacy is the change power's SetBoot makes for BootSourceOverrideMode
// Legacy: mode recorded, decided by ValidateLegacy.
func legacy(vm *VM, b *system.BootOverride) error {
	b.Mode = system.BootLegacy
	return ValidateLegacy(vm)
}

// authorApply applies the fixture VM as test-author would (SSA), with
// efi {secureBoot: false} when efi is set and label as a label.
func (e *env) authorApply(t *testing.T, name string, efi bool, label string) {
	t.Helper()
	u := baseVM(t)
	u.SetName(name)
	u.SetNamespace(e.ns)
	u.SetResourceVersion("")
	u.SetLabels(map[string]string{"step": label})
	if efi {
		if err := unstructured.SetNestedMap(u.Object, map[string]any{"secureBoot": false}, kubevirt.EFI...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.admin.Resource(kubevirt.VirtualMachines).Namespace(e.ns).Apply(t.Context(), name, u, metav1.ApplyOptions{FieldManager: "test-author"}); err != nil {
		t.Fatalf("author apply (efi %v, %s): %v", efi, label, err)
	}
}

// under lists the paths of paths at or below prefix.
func under(paths []string, prefix string) []string {
	var out []string
	for _, p := range paths {
		if p == prefix || strings.HasPrefix(p, prefix+".") {
			out = append(out, p)
		}
	}
	return out
}

// entries lists the VM's managedFields entries as manager/operation.
func (e *env) entries(t *testing.T, key system.Key) []string {
	t.Helper()
	var out []string
	for _, mf := range e.get(t, key).GetManagedFields() {
		out = append(out, mf.Manager+"/"+string(mf.Operation))
	}
	return out
}

func testLegacyReleasesAuthorEFI(t *testing.T, e *env) {
	ctx := t.Context()
	w := New(e.bridge, nil, e.mode, Options{})
	e.authorApply(t, "vm-legacy", true, "created")
	key := system.Key{Namespace: e.ns, Name: "vm-legacy"}
	if got := under(e.ownedBy(t, key, "test-author"), efiPath); len(got) == 0 {
		t.Fatalf("fixture: test-author owns nothing of efi")
	}
	vm, err := w.Boot(ctx, key, legacy)
	if err != nil {
		t.Fatalf("Legacy over the author's efi: %v", err)
	}
	if mode, _ := vm.Firmware(); mode != system.BootLegacy {
		t.Errorf("after Legacy the VM boots %s", mode)
	}
	live := e.get(t, key)
	if _, found, _ := unstructured.NestedFieldNoCopy(live.Object, kubevirt.EFI...); found {
		t.Errorf("efi left on the VM")
	}
	if diff := cmp.Diff([]string{biosPath}, under(e.ownedBy(t, key, ManagerBoot), path(kubevirt.Bootloader))); diff != "" {
		t.Errorf("%s's bootloader fields (-want +got):\n%s", ManagerBoot, diff)
	}
	if got := under(e.ownedBy(t, key, "test-author"), path(kubevirt.Bootloader)); len(got) != 0 {
		t.Errorf("test-author still owns %v", got)
	}
	for _, entry := range e.entries(t, key) {
		if entry == ManagerBoot+"/Update" {
			t.Errorf("the release left a %s entry: %v", entry, e.ownedBy(t, key, ManagerBoot))
		}
	}
	// The author applies again, without efi: it merges, Legacy stays.
	e.authorApply(t, "vm-legacy", false, "reapplied")
	live = e.get(t, key)
	if mode, _ := (&VM{Object: live}).Firmware(); mode != system.BootLegacy || live.GetLabels()["step"] != "reapplied" {
		t.Errorf("after the author's apply: boots %s, labels %v", mode, live.GetLabels())
	}
	if diff := cmp.Diff([]string{biosPath}, under(e.ownedBy(t, key, ManagerBoot), path(kubevirt.Bootloader))); diff != "" {
		t.Errorf("%s's bootloader fields after the author's apply (-want +got):\n%s", ManagerBoot, diff)
	}
	// The author applies efi again: it merges too (the apiserver keeps
	// both; virt-api's validator would refuse both), and the VM reads as
	// UEFI, what KubeVirt boots while efi is set. Legacy asked again takes
	// efi out again.
	e.authorApply(t, "vm-legacy", true, "efi-again")
	if mode, _ := (&VM{Object: e.get(t, key)}).Firmware(); mode != system.BootUEFI {
		t.Errorf("the author's efi back: the VM reads as %s", mode)
	}
	noErr(t)(w.Boot(ctx, key, legacy))
	if mode, _ := (&VM{Object: e.get(t, key)}).Firmware(); mode != system.BootLegacy {
		t.Errorf("Legacy again: the VM reads as %s", mode)
	}
}

// testLegacyReleaseStale: the removal carries the resourceVersion read. One
// decided on a read an outside write overtook is a 409 that leaves efi;
// Boot, whose first read is overtaken the same way, retries from a live
// read and switches.
func testLegacyReleaseStale(t *testing.T, e *env) {
	ctx := t.Context()
	w := New(e.bridge, nil, e.mode, Options{})
	e.authorApply(t, "vm-stale", true, "created")
	key := system.Key{Namespace: e.ns, Name: "vm-stale"}
	stale, err := w.Read(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	e.authorApply(t, "vm-stale", true, "moved-on")
	if _, err := w.releaseEFI(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("release on a stale read: %v, want a 409 Conflict", err)
	}
	if mode, _ := (&VM{Object: e.get(t, key)}).Firmware(); mode != system.BootUEFI {
		t.Fatalf("a refused release changed the VM: it reads as %s", mode)
	}
	calls := 0
	overtaken := func(vm *VM, b *system.BootOverride) error {
		calls++
		if calls == 1 {
			e.authorApply(t, "vm-stale", true, fmt.Sprintf("overtaking-%d", calls))
		}
		return legacy(vm, b)
	}
	before := w.Stats()[ManagerBoot].Retries
	noErr(t)(w.Boot(ctx, key, overtaken))
	if mode, _ := (&VM{Object: e.get(t, key)}).Firmware(); mode != system.BootLegacy {
		t.Errorf("after the retried switch the VM reads as %s", mode)
	}
	if got := w.Stats()[ManagerBoot].Retries - before; got != 1 || calls != 3 {
		t.Errorf("retries %d, change calls %d: want 1 retry (the 409) and 3 calls (overtaken, retried, after the release)", got, calls)
	}
}
