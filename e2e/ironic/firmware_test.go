package ironic

import (
	"net/http"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// firmwareUpdateScenario (Ironic 39's redfish firmware interface): a
// firmware update has no meaning for a VM, whose firmware is KubeVirt's.
// Servicing an active node with firmware.update (a service step needs no
// ramdisk) sends SimpleUpdate and fails with the bridge's refusal (400
// ActionNotSupported and why) in last_error.
func firmwareUpdateScenario(t *testing.T, s *suite, v crds.Variant) {
	image := s.imageURL(bootISO)
	n := s.enroll(t, v, vmFirmware, "ramdisk", nil)
	n.step(t, "firmware interface redfish", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "replace", "path": "/firmware_interface", "value": "redfish"}); err != nil {
			t.Fatalf("firmware_interface redfish: %v", err)
		}
	})
	n.step(t, "manage", func() { n.provision(t, "manage", "manageable", nil) })
	n.step(t, "provide", func() { n.provision(t, "provide", "available", nil) })
	n.step(t, "deploy to active", func() {
		if _, err := s.api.PatchNode(t.Context(), n.uuid, map[string]any{"op": "add", "path": "/instance_info/boot_iso", "value": image}); err != nil {
			t.Fatalf("set instance_info/boot_iso: %v", err)
		}
		n.provision(t, "active", "active", nil)
	})
	n.step(t, "service: firmware.update is refused", func() {
		updates := n.rec.count(http.MethodPost, "/UpdateService/Actions/UpdateService.SimpleUpdate")
		steps := []map[string]any{{"interface": "firmware", "step": "update",
			"args": map[string]any{"settings": []map[string]any{{"component": "bios", "url": s.imageURL("firmware.bin")}}}}}
		if err := s.api.Provision(t.Context(), n.uuid, "service", map[string]any{"service_steps": steps}); err != nil {
			t.Fatalf("service: %v", err)
		}
		got := n.settle(t, "service firmware.update", "service failed")
		le := str(got.LastError)
		// The bridge's refusal, as sushy reports the 400: its message
		// and the Resolution saying why.
		for _, want := range []string{"ActionNotSupported", "has no firmware to update through Redfish"} {
			if !strings.Contains(le, want) {
				t.Errorf("last_error %q, want the bridge's refusal (%q)", le, want)
			}
		}
		if n.rec.count(http.MethodPost, "/UpdateService/Actions/UpdateService.SimpleUpdate") == updates {
			t.Errorf("Ironic sent no SimpleUpdate")
		}
		t.Logf("firmware update refused: %s", le)
	})
	n.checkFields(t)
}
