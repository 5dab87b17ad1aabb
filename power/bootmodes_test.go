package power

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/apply"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestBootModes: the modes a System advertises are those SetBoot accepts
// (its decision, mergeBoot, on the same read): Legacy is left out while
// Secure Boot is Enabled (recorded, or the author's in the spec) and while
// a UefiHttp override is pending, not because another writer owns
// firmware.bootloader.efi (the Writer removes it); UEFI always stays.
func TestBootModes(t *testing.T) {
	efiFields := func(manager string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "kubevirt.io/v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:domain":{"f:firmware":{"f:bootloader":{"f:efi":{"f:secureBoot":{}}}}}}}}}`)}
	}
	both := []system.BootMode{system.BootUEFI, system.BootLegacy}
	uefi := []system.BootMode{system.BootUEFI}
	tests := []struct {
		name    string
		efi     bool
		secure  bool   // efi.secureBoot
		manager string // owner of efi.secureBoot
		o       system.BootOverride
		want    []system.BootMode
	}{
		{name: "no bootloader", want: both},
		{name: "efi the author's", efi: true, manager: "demo-author", want: both},
		{name: "efi the author's, Secure Boot", efi: true, secure: true, manager: "demo-author", want: uefi},
		{name: "efi the bridge's", efi: true, manager: apply.ManagerBoot,
			o: system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootDisabled}, want: both},
		{name: "secure boot enabled", efi: true, manager: apply.ManagerBoot,
			o: system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootEnabled}, want: uefi},
		{name: "uefihttp pending", efi: true, manager: apply.ManagerBoot,
			o:    system.BootOverride{Mode: system.BootUEFI, SecureBoot: system.SecureBootDisabled, Target: system.BootUefiHttp, Enabled: system.BootOnce, HTTPBootURI: "http://img/boot.efi"},
			want: uefi},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
				"metadata": map[string]any{"name": "vm", "namespace": "ns", "resourceVersion": "1"},
				"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"domain": map[string]any{}}}},
			}}
			if tt.efi {
				if err := unstructured.SetNestedField(obj.Object, map[string]any{"secureBoot": tt.secure}, kubevirt.EFI...); err != nil {
					t.Fatal(err)
				}
				obj.SetManagedFields([]metav1.ManagedFieldsEntry{efiFields(tt.manager)})
			}
			if tt.o != (system.BootOverride{}) {
				b, err := json.Marshal(tt.o)
				if err != nil {
					t.Fatal(err)
				}
				obj.SetAnnotations(map[string]string{apply.AnnotationBoot: string(b)})
			}
			vm := apply.Decode(t.Context(), system.Key{Namespace: "ns", Name: "vm"}, obj, nil)
			if diff := cmp.Diff(tt.want, BootModes(vm)); diff != "" {
				t.Errorf("BootModes (-want +got):\n%s", diff)
			}
		})
	}
}
