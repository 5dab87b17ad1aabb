package apply

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/inventory"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// decisions is everything the Writer decides from one read of a VM: the
// bodies its builders build and its firmware verdicts.
type decisions struct {
	Bodies        map[string]*Body
	Errors        map[string]string
	Legacy, Reset string
	ResetTo       system.BootOverride
	Settled, Arms bool
	// Owns are the ownership checks the builders make.
	Owns map[string]bool
}

func decisionsOf(t *testing.T, mode Mode, vm *VM) decisions {
	t.Helper()
	d := decisions{Bodies: map[string]*Body{}, Errors: map[string]string{}}
	keep := func(name string, b *Body, err error) {
		if err != nil {
			d.Errors[name] = err.Error()
			return
		}
		d.Bodies[name] = b
	}
	overrides := map[string]system.BootOverride{
		"none":                {},
		"cd-once":             {Target: system.BootCd, Enabled: system.BootOnce, ArmedVMI: "uid-1"},
		"pxe-continuous-uefi": {Target: system.BootPxe, Enabled: system.BootContinuous, Mode: system.BootUEFI, SecureBoot: system.SecureBootEnabled},
		"hdd-legacy":          {Target: system.BootHdd, Enabled: system.BootContinuous, Mode: system.BootLegacy},
	}
	for name, o := range overrides {
		b, err := BuildBoot(mode, vm, o, nil)
		keep("boot "+name, b, err)
		d.Arms = d.Arms || armsTerminate(vm, o)
	}
	fresh := system.MediaSlot{Slot: "cd1", Image: "http://images/other.iso", Phase: system.MediaReady, InsertID: "i-9", ClaimName: "vm-0-media-cd1"}
	for name, slots := range map[string]map[string]system.MediaSlot{
		"as read": vm.Slots, "eject all": {}, "insert cd1": {"cd1": fresh},
	} {
		b, err := BuildMedia(mode, vm, slots)
		keep("media "+name, b, err)
	}
	for name, c := range map[string]PowerChange{"intent only": {Intent: system.PowerIntent{OnDeferred: true}}, "on": {RunStrategy: kubevirt.RunStrategyAlways}} {
		b, err := BuildPower(vm, c)
		keep("power "+name, b, err)
	}
	b, err := BuildStateRequests(vm, []kubevirt.StateChangeRequest{{Action: kubevirt.StopRequest, UID: "uid-1"}})
	keep("state stop", b, err)
	d.Legacy = fmt.Sprint(ValidateLegacy(vm))
	d.ResetTo = system.BootOverride{Target: system.BootCd, Enabled: system.BootOnce, Mode: system.BootUEFI, SecureBoot: system.SecureBootEnabled}
	d.Reset = fmt.Sprint(ResetOverride(vm, &d.ResetTo))
	d.Settled = Settled(vm)
	d.Owns = map[string]bool{
		"power runStrategy": owns(vm, ManagerPower, kubevirt.RunStrategy.Any()...),
		"boot rebootPolicy": owns(vm, ManagerBoot, kubevirt.RebootPolicy.Any()...),
	}
	for _, m := range []string{ManagerMedia, ManagerBoot} {
		for name, p := range map[string][]string{"disks": kubevirt.Disks, "volumes": kubevirt.Volumes, "interfaces": kubevirt.Interfaces} {
			d.Owns[m+" "+name] = ownsList(vm, m, p)
		}
	}
	return d
}

// TestCompactVMBuildsSameBodies checks, in both list modes, that the
// Writer decides the same on a VM as the inventory caches it
// (inventory.CompactVM: the compact object and the managedFields kept
// aside) as on the whole VM: every builder's body, the firmware verdicts
// (who else owns efi) and the ownership checks. The VM is vm-0 of the
// demo (managedFields of redfish-power, redfish-media, its author and
// virt-controller), and variants where the bridge owns efi.
func TestCompactVMBuildsSameBodies(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "inventory", "testdata", "vm.json"))
	if err != nil {
		t.Fatal(err)
	}
	authorBootloader := []string{"f:spec", "f:template", "f:spec", "f:domain", "f:firmware", "f:bootloader"}
	variants := []struct {
		name string
		edit func(t *testing.T, u map[string]any)
	}{
		{"the author owns efi", func(*testing.T, map[string]any) {}},
		{"redfish-boot alone owns efi", func(t *testing.T, u map[string]any) {
			unstructured.RemoveNestedField(fieldsOf(t, u, "demo-author"), append(authorBootloader, "f:efi")...)
			addBootEntry(t, u)
		}},
		{"redfish-boot owns secureBoot, the author efi", func(t *testing.T, u map[string]any) {
			unstructured.RemoveNestedField(fieldsOf(t, u, "demo-author"), append(authorBootloader, "f:efi", "f:secureBoot")...)
			addBootEntry(t, u)
		}},
		{"boot override set, boot orders, Secure Boot on", func(t *testing.T, u map[string]any) {
			if err := unstructured.SetNestedField(u, true, kubevirt.EFI.Child(kubevirt.KeySecureBoot)...); err != nil {
				t.Fatal(err)
			}
			kubevirt.SliceAt(u, kubevirt.Disks...)[0].(map[string]any)[kubevirt.KeyBootOrder] = int64(2)
			if err := unstructured.SetNestedField(u, `{"target":"Hdd","enabled":"Continuous","mode":"UEFI"}`, "metadata", "annotations", AnnotationBoot); err != nil {
				t.Fatal(err)
			}
			addBootEntry(t, u)
		}},
	}
	for _, v := range variants {
		for _, mode := range []Mode{ModeMap, ModeAtomic} {
			t.Run(fmt.Sprintf("%s/%s", v.name, mode), func(t *testing.T) {
				fixture := func() *unstructured.Unstructured {
					u := &unstructured.Unstructured{}
					if err := u.UnmarshalJSON(raw); err != nil {
						t.Fatalf("decode fixture: %v", err)
					}
					v.edit(t, u.Object)
					return u
				}
				key := system.Key{Namespace: "demo", Name: "vm-0"}
				whole := Decode(t.Context(), key, fixture(), nil)
				kept, owners := inventory.CompactVM(fixture())
				compact := Decode(t.Context(), key, kept, nil)
				compact.managed, compact.managedAside = owners, true
				if diff := cmp.Diff(decisionsOf(t, mode, whole), decisionsOf(t, mode, compact)); diff != "" {
					t.Errorf("decisions on the cached VM differ (-whole +cached):\n%s", diff)
				}
			})
		}
	}
}

// fieldsOf returns the fieldsV1 of manager's first managedFields entry.
func fieldsOf(t *testing.T, u map[string]any, manager string) map[string]any {
	t.Helper()
	for _, e := range kubevirt.SliceAt(u, "metadata", "managedFields") {
		if m := e.(map[string]any); m["manager"] == manager {
			return m["fieldsV1"].(map[string]any)
		}
	}
	t.Fatalf("no managedFields entry of %s", manager)
	return nil
}

// addBootEntry appends a redfish-boot Apply entry owning the boot
// annotation and efi with its secureBoot to u's managedFields.
func addBootEntry(t *testing.T, u map[string]any) {
	t.Helper()
	var f map[string]any
	const fields = `{"f:metadata":{"f:annotations":{"f:redfish-bridge.io/boot":{}}},"f:spec":{"f:template":{"f:spec":{"f:domain":{"f:firmware":{"f:bootloader":{"f:efi":{".":{},"f:secureBoot":{}}}}}}}}}`
	if err := json.Unmarshal([]byte(fields), &f); err != nil {
		t.Fatal(err)
	}
	entries := append(kubevirt.SliceAt(u, "metadata", "managedFields"), map[string]any{
		"manager": ManagerBoot, "operation": "Apply", "apiVersion": "kubevirt.io/v1",
		"time": "2026-12-05T03:16:00Z", "fieldsType": "FieldsV1", "fieldsV1": f,
	})
	if err := unstructured.SetNestedSlice(u, entries, "metadata", "managedFields"); err != nil {
		t.Fatal(err)
	}
}
