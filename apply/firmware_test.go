package apply

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestFirmwareIgnoresRecordedMode: what the VM boots comes from its spec
// alone (kubevirt.TestFirmware has the spec cases); the boot annotation
// redfish-boot records never outvotes the spec.
func TestFirmwareIgnoresRecordedMode(t *testing.T) {
	tests := []struct {
		name       string
		annotation string
		loader     map[string]any
		wantMode   system.BootMode
		wantSecure bool
	}{
		{name: "recorded Legacy, spec efi: the spec", annotation: `{"mode":"Legacy"}`, loader: map[string]any{"efi": map[string]any{}}, wantMode: system.BootUEFI, wantSecure: true},
		{name: "recorded UEFI, no bootloader: the spec", annotation: `{"mode":"UEFI"}`, wantMode: system.BootLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := baseVM(t)
			if tt.annotation != "" {
				annotate(u, AnnotationBoot, tt.annotation)
			}
			if tt.loader != nil {
				if err := unstructured.SetNestedMap(u.Object, tt.loader, kubevirt.Bootloader...); err != nil {
					t.Fatal(err)
				}
			}
			mode, secure := decodeFixture(u).Firmware()
			if mode != tt.wantMode || secure != tt.wantSecure {
				t.Errorf("Firmware = %s, secure boot %v; want %s, %v", mode, secure, tt.wantMode, tt.wantSecure)
			}
		})
	}
}

// TestValidateLegacy: Legacy answers ErrForeignEFI (with a refusal naming
// the owner, for a Writer that cannot release it) while anything of efi
// belongs to another writer (an apply cannot remove it: Client.Boot
// removes it first), nil when redfish-boot wrote all of it (the Legacy
// apply removes it), and is refused while the spec boots Secure Boot.
func TestValidateLegacy(t *testing.T) {
	const efiBoot = `{"f:spec":{"f:template":{"f:spec":{"f:domain":{"f:firmware":{"f:bootloader":{"f:efi":{"f:secureBoot":{}}}}}}}}}`
	tests := []struct {
		name    string
		efi     map[string]any
		owners  map[string]string // manager -> FieldsV1
		wantWho string            // "" for allowed
		// wantSecure: refused, Secure Boot in the way
		wantSecure bool
	}{
		{name: "no efi", owners: map[string]string{"author": `{"f:spec":{"f:runStrategy":{}}}`}},
		{name: "efi written by redfish-boot", efi: map[string]any{"secureBoot": false}, owners: map[string]string{ManagerBoot: efiBoot}},
		{
			// The state after Secure Boot was forced on and off: the author
			// keeps the efi map itself.
			name: "author keeps the efi map", efi: map[string]any{"secureBoot": false},
			owners:  map[string]string{ManagerBoot: efiBoot, "demo-author": `{"f:spec":{"f:template":{"f:spec":{"f:domain":{"f:firmware":{"f:bootloader":{"f:efi":{}}}}}}}}`},
			wantWho: "field manager demo-author",
		},
		{
			name: "shared leaf", efi: map[string]any{"secureBoot": false},
			owners:  map[string]string{ManagerBoot: efiBoot, "kubectl-edit": efiBoot},
			wantWho: "field manager kubectl-edit",
		},
		{name: "nobody recorded", efi: map[string]any{"secureBoot": false}, wantWho: "a writer other than the bridge"},
		{
			name: "a leaf redfish-boot does not own", efi: map[string]any{"secureBoot": false, "persistent": true},
			owners: map[string]string{ManagerBoot: efiBoot}, wantWho: "a writer other than the bridge",
		},
		{name: "the author's Secure Boot", efi: map[string]any{"secureBoot": true}, owners: map[string]string{"demo-author": efiBoot}, wantSecure: true},
		{name: "the author's efi, Secure Boot by default", efi: map[string]any{}, owners: map[string]string{"demo-author": efiBoot}, wantSecure: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := baseVM(t)
			if tt.efi != nil {
				if err := unstructured.SetNestedMap(u.Object, tt.efi, kubevirt.EFI...); err != nil {
					t.Fatal(err)
				}
			}
			var mfs []metav1.ManagedFieldsEntry
			for manager, fields := range tt.owners {
				mfs = append(mfs, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)})
			}
			u.SetManagedFields(mfs)
			err := ValidateLegacy(decodeFixture(u))
			if tt.wantSecure {
				refused, ok := errors.AsType[*RefusedError](err)
				if !ok || errors.Is(err, ErrForeignEFI) || refused.ConflictsWith != PropertySecureBoot || !strings.Contains(refused.Reason, "Secure Boot is enabled") {
					t.Fatalf("err %v, want a refusal in conflict with %s", err, PropertySecureBoot)
				}
				return
			}
			if tt.wantWho == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			refused, ok := errors.AsType[*RefusedError](err)
			if !ok || !errors.Is(err, ErrForeignEFI) || !errors.Is(err, ErrInvalid) || refused.ConflictsWith != "" || refused.Property != PropertyBootMode || refused.Value != "Legacy" {
				t.Fatalf("err %v, want ErrForeignEFI and a RefusedError (ErrInvalid, no conflict)", err)
			}
			if !strings.Contains(refused.Reason, "owned by "+tt.wantWho) || !strings.Contains(refused.Reason, "boots UEFI") {
				t.Errorf("reason %q does not name %q and why", refused.Reason, tt.wantWho)
			}
		})
	}
}

// TestValidateLegacyOncePerVersion: a VM read from a DecisionCache has its
// managedFields parsed for ValidateLegacy once per resourceVersion (every
// render of its System asks): a second ask at the same version answers
// without parsing them (here made unparseable to tell), one at a new
// version decides afresh. (inventory.TestVMOwnersDecision: the inventory
// keeps one per VM, for any number of VMs.)
func TestValidateLegacyOncePerVersion(t *testing.T) {
	const efiBoot = `{"f:spec":{"f:template":{"f:spec":{"f:domain":{"f:firmware":{"f:bootloader":{"f:efi":{"f:secureBoot":{}}}}}}}}}`
	u := baseVM(t)
	if err := unstructured.SetNestedMap(u.Object, map[string]any{"secureBoot": false}, kubevirt.EFI...); err != nil {
		t.Fatal(err)
	}
	u.SetResourceVersion("1")
	vm := decodeFixture(u)
	owners := func(fields string) { // kept aside, as the inventory's cache does
		vm.managed = []metav1.ManagedFieldsEntry{{Manager: ManagerBoot, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}}
		vm.managedAside = true
	}
	owners(efiBoot)
	vm.decisions = versionDecisions{}
	if err := ValidateLegacy(vm); err != nil {
		t.Fatalf("efi written by redfish-boot: refused: %v", err)
	}
	owners(`{"f:spec":`) // unparseable: a parse would answer an error
	for _, tc := range []struct {
		name, resourceVersion string
		wantErr               bool
	}{
		{"same version: the answer kept", "1", false},
		{"new version: decided afresh", "2", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm.Object.SetResourceVersion(tc.resourceVersion)
			if err := ValidateLegacy(vm); (err != nil) != tc.wantErr {
				t.Errorf("ValidateLegacy at resourceVersion %s = %v, want an error: %v", tc.resourceVersion, err, tc.wantErr)
			}
		})
	}
}

// versionDecisions is a [DecisionCache] keeping one decision per VM
// version, as the inventory does.
type versionDecisions map[string]any

func (d versionDecisions) VMOwnersDecision(key system.Key, resourceVersion string, decide func() any) (any, bool) {
	k := key.String() + "@" + resourceVersion
	if a, ok := d[k]; ok {
		return a, true
	}
	d[k] = decide()
	return d[k], true
}
