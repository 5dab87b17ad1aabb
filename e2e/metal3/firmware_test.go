package metal3

import (
	"context"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/redfish-bridge/redfish-bridge/harness/vmcheck"
)

var (
	hostFirmwareSettings = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "hostfirmwaresettings"}
	firmwareSchemas      = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "firmwareschemas"}
)

// biosAttribute is what the bridge's AttributeRegistry says of one Bios
// attribute, as BMO's FirmwareSchema holds it.
type biosAttribute struct {
	Type     string
	Allowed  []string
	ReadOnly bool
}

// biosRegistry is the bridge's AttributeRegistry (redfish/biosregistry.go).
var biosRegistry = map[string]biosAttribute{
	"BootMode":   {Type: "Enumeration", Allowed: []string{"Uefi", "Bios"}},
	"SecureBoot": {Type: "Enumeration", Allowed: []string{"Enabled", "Disabled"}},
}

// firmwareSettings waits until BMO's HostFirmwareSettings of the host show
// want (the System's Bios attributes, which Ironic's redfish bios interface
// cached), then checks the FirmwareSchema they name against the bridge's
// AttributeRegistry.
func (h *host) firmwareSettings(t *testing.T, want map[string]string) {
	t.Helper()
	var ref map[string]any
	h.eventually(t, fmt.Sprintf("HostFirmwareSettings %v", want), func(ctx context.Context) error {
		hfs, err := h.dyn.Resource(hostFirmwareSettings).Namespace(h.ns).Get(ctx, h.name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read HostFirmwareSettings: %w", err)
		}
		got, _, _ := unstructured.NestedStringMap(hfs.Object, "status", "settings")
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("status.settings %v", got)
			}
		}
		ref, _, _ = unstructured.NestedMap(hfs.Object, "status", "schema")
		if ref == nil {
			return fmt.Errorf("no status.schema: %v", hfs.Object["status"])
		}
		return nil
	})
	ns, _ := ref["namespace"].(string)
	name, _ := ref["name"].(string)
	fs, err := h.dyn.Resource(firmwareSchemas).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read FirmwareSchema %s/%s: %v", ns, name, err)
	}
	for attr, w := range biosRegistry {
		s, _, _ := unstructured.NestedMap(fs.Object, "spec", "schema", attr)
		typ, _ := s["attribute_type"].(string)
		allowed, _, _ := unstructured.NestedStringSlice(s, "allowable_values")
		ro, _ := s["read_only"].(bool)
		if typ != w.Type || !slices.Equal(allowed, w.Allowed) || ro != w.ReadOnly {
			t.Errorf("FirmwareSchema %s %s: %v; want the registry's %s %v, read_only %v", name, attr, s, w.Type, w.Allowed, w.ReadOnly)
		}
	}
}

// setFirmware merges settings into the HostFirmwareSettings' spec and
// waits until BMO's HostFirmwareSettings controller has judged that
// generation: ChangeDetected and Valid true. From then on the host's next
// preparing (before provisioning, or from available) applies them: Ironic
// manual cleaning with bios.apply_configuration, which needs no agent.
func (h *host) setFirmware(t *testing.T, settings map[string]any) {
	t.Helper()
	body, err := (&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"settings": settings}}}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.dyn.Resource(hostFirmwareSettings).Namespace(h.ns).Patch(t.Context(), h.name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch HostFirmwareSettings %s %s: %v", h.name, body, err)
	}
	h.eventually(t, "HostFirmwareSettings ChangeDetected and Valid", func(ctx context.Context) error {
		hfs, err := h.dyn.Resource(hostFirmwareSettings).Namespace(h.ns).Get(ctx, h.name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read HostFirmwareSettings: %w", err)
		}
		conds, _, _ := unstructured.NestedSlice(hfs.Object, "status", "conditions")
		for _, want := range []string{"ChangeDetected", "Valid"} {
			if !hasCondition(conds, want, hfs.GetGeneration()) {
				return fmt.Errorf("no %s True for generation %d: %v", want, hfs.GetGeneration(), conds)
			}
		}
		return nil
	})
}

// hasCondition reports whether conds has typ with status True observed at
// generation.
func hasCondition(conds []any, typ string, generation int64) bool {
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			g, _, _ := unstructured.NestedInt64(m, "observedGeneration")
			return g == generation
		}
	}
	return false
}

// secureBoot is firmware.bootloader.efi.secureBoot of the VM and of its
// VMI ("-" unset or no VMI).
func (h *host) secureBoot(t *testing.T) (vm, vmi string) {
	t.Helper()
	get := func(o *unstructured.Unstructured, path ...string) string {
		if o == nil {
			return "-"
		}
		v, ok, _ := unstructured.NestedFieldNoCopy(o.Object, append(path, "domain", "firmware", "bootloader", "efi", "secureBoot")...)
		if !ok {
			return "-"
		}
		return fmt.Sprint(v)
	}
	return get(h.vm(t), "spec", "template", "spec"), get(vmcheck.MustVMI(t, h.dyn, h.key), "spec")
}
