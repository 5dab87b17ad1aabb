package ironic

import (
	"fmt"
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/ironicproc"
)

// biosSetting is one entry of Ironic's GET /v1/nodes/<n>/bios?detail=True.
type biosSetting struct {
	Name            string   `json:"name"`
	Value           string   `json:"value"`
	AttributeType   *string  `json:"attribute_type"`
	AllowableValues []string `json:"allowable_values"`
	ReadOnly        *bool    `json:"read_only"`
	ResetRequired   *bool    `json:"reset_required"`
}

// biosScenario (Ironic 39's redfish bios interface, what metal3's
// HostFirmwareSettings read): the node's BIOS settings carry the bridge's
// attribute registry; manual cleaning applies SecureBoot Enabled
// (bios.apply_configuration: a Bios/Settings PATCH and a reboot) and
// factory-resets it (bios.factory_reset: Bios.ResetBios and a reboot). Its
// sample VM's author wrote efi {secureBoot: false}: the reset leaves UEFI
// with Secure Boot off and no SMM (redfish-boot keeps owning the
// secureBoot it set, false: apply.ResetOverride).
func biosScenario(t *testing.T, s *suite, v crds.Variant) {
	n := s.enroll(t, v, vmBios, "ramdisk", nil)
	n.step(t, "bios interface redfish", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "replace", "path": "/bios_interface", "value": "redfish"}); err != nil {
			t.Fatalf("bios_interface redfish: %v", err)
		}
	})
	n.step(t, "manage (caches the BIOS settings)", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "settings with the registry's fields", func() {
		got := n.biosSettings(t)
		for name, allowed := range map[string][]string{"BootMode": {"Uefi", "Bios"}, "SecureBoot": {"Enabled", "Disabled"}} {
			b, ok := got[name]
			switch {
			case !ok:
				t.Errorf("no BIOS setting %s: %+v", name, got)
			case str(b.AttributeType) != "Enumeration" || fmt.Sprint(b.AllowableValues) != fmt.Sprint(allowed) ||
				b.ReadOnly == nil || *b.ReadOnly || b.ResetRequired == nil || !*b.ResetRequired:
				t.Errorf("BIOS setting %s: type %s, allowable %v, read_only %v, reset_required %v; want the registry's Enumeration %v, writable, reset required",
					name, str(b.AttributeType), b.AllowableValues, b.ReadOnly, b.ResetRequired, allowed)
			}
		}
		if got["BootMode"].Value != "Uefi" || got["SecureBoot"].Value != "Disabled" {
			t.Errorf("settings %+v, want the author's firmware: Uefi, SecureBoot Disabled", got)
		}
	})
	n.step(t, "clean: bios.apply_configuration SecureBoot Enabled", func() {
		n.biosClean(t, map[string]any{"interface": "bios", "step": "apply_configuration",
			"args": map[string]any{"settings": []map[string]any{{"name": "SecureBoot", "value": "Enabled"}}}})
		if got := n.firmware(t); got != "secureBoot=true smm=true" {
			t.Errorf("VM firmware after apply_configuration: %s, want secureBoot=true smm=true", got)
		}
		if b := n.biosSettings(t)["SecureBoot"]; b.Value != "Enabled" {
			t.Errorf("Ironic's SecureBoot setting after apply_configuration: %+v", b)
		}
	})
	n.step(t, "clean: bios.factory_reset", func() {
		resets := n.rec.count(http.MethodPost, n.key.ID()+"/Bios/Actions/Bios.ResetBios")
		n.biosClean(t, map[string]any{"interface": "bios", "step": "factory_reset"})
		if n.rec.count(http.MethodPost, n.key.ID()+"/Bios/Actions/Bios.ResetBios") == resets {
			t.Errorf("factory_reset sent no Bios.ResetBios")
		}
		if got := n.firmware(t); got != "secureBoot=false smm=-" {
			t.Errorf("VM firmware after factory_reset: %s, want the author's UEFI without Secure Boot: secureBoot=false smm=-", got)
		}
		if b := n.biosSettings(t)["SecureBoot"]; b.Value != "Disabled" {
			t.Errorf("Ironic's SecureBoot setting after factory_reset: %+v", b)
		}
	})
	n.step(t, "power off", func() { n.power(t, "power off", "power off") })
	n.checkFields(t)
}

// biosSettings is the node's BIOS settings with their registry fields.
func (n *node) biosSettings(t *testing.T) map[string]biosSetting {
	t.Helper()
	var out struct {
		Bios []biosSetting `json:"bios"`
	}
	if err := n.s.api.Do(t.Context(), http.MethodGet, "/v1/nodes/"+n.uuid+"/bios?detail=True", nil, &out); err != nil {
		t.Fatalf("bios settings: %v", err)
	}
	got := map[string]biosSetting{}
	for _, b := range out.Bios {
		got[b.Name] = b
	}
	return got
}

// biosClean runs one bios clean step (no ramdisk: Ironic reboots the node
// and polls the Bios until the reboot applied it) and waits for
// manageable without an error.
func (n *node) biosClean(t *testing.T, step map[string]any) {
	t.Helper()
	got := n.provision(t, "clean", "manageable", map[string]any{"clean_steps": []map[string]any{step}})
	if le := ironicproc.Str(got.LastError); le != "" {
		t.Fatalf("clean step %v: %s", step, got.Summary())
	}
}

// firmware is the VM spec's efi.secureBoot and features.smm.enabled, "-"
// for absent.
func (n *node) firmware(t *testing.T) string {
	t.Helper()
	get := func(p ...string) string {
		v, ok, _ := unstructured.NestedFieldNoCopy(n.vm(t).Object, append([]string{"spec", "template", "spec", "domain"}, p...)...)
		if !ok {
			return "-"
		}
		return fmt.Sprint(v)
	}
	return "secureBoot=" + get("firmware", "bootloader", "efi", "secureBoot") + " smm=" + get("features", "smm", "enabled")
}
