package redfish

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestBiosCurrentAndPending: the Bios resource and SecureBootCurrentBoot
// show what the running system booted (SystemView.Booted, its VMI), the
// Settings resource and SecureBootEnable what the next boot uses (the
// spec); with no VMI nothing booted: Bios shows the spec, nothing is
// pending, SecureBootCurrentBoot is null. Bios links its Settings.
func TestBiosCurrentAndPending(t *testing.T) {
	tests := []struct {
		name        string
		mode        system.BootMode // spec
		secure      bool            // spec
		booted      *Firmware
		wantBios    map[string]any
		wantPending map[string]any
		wantCurrent any // SecureBootCurrentBoot
	}{
		{
			name: "off", mode: system.BootUEFI, secure: true,
			wantBios:    map[string]any{"BootMode": "Uefi", "SecureBoot": "Enabled"},
			wantPending: map[string]any{"BootMode": "Uefi", "SecureBoot": "Enabled"},
			wantCurrent: nil,
		},
		{
			name: "secure boot enabled while running without", mode: system.BootUEFI, secure: true,
			booted:      &Firmware{Mode: system.BootUEFI},
			wantBios:    map[string]any{"BootMode": "Uefi", "SecureBoot": "Disabled"},
			wantPending: map[string]any{"BootMode": "Uefi", "SecureBoot": "Enabled"},
			wantCurrent: "Disabled",
		},
		{
			name: "uefi set while running bios", mode: system.BootUEFI,
			booted:      &Firmware{Mode: system.BootLegacy},
			wantBios:    map[string]any{"BootMode": "Bios", "SecureBoot": "Disabled"},
			wantPending: map[string]any{"BootMode": "Uefi", "SecureBoot": "Disabled"},
			wantCurrent: "Disabled",
		},
		{
			name: "secure boot disabled while running with it", mode: system.BootUEFI,
			booted:      &Firmware{Mode: system.BootUEFI, SecureBoot: true},
			wantBios:    map[string]any{"BootMode": "Uefi", "SecureBoot": "Enabled"},
			wantPending: map[string]any{"BootMode": "Uefi", "SecureBoot": "Disabled"},
			wantCurrent: "Enabled",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			const sys = "/redfish/v1/Systems/team-b.vm3"
			e.fake.mu.Lock()
			v := e.fake.systems["team-b.vm3"]
			v.BootMode, v.SecureBoot, v.Booted = tt.mode, tt.secure, tt.booted
			e.fake.bump(v)
			e.fake.mu.Unlock()

			bios := e.get(t, "bob", sys+"/Bios")
			if diff := cmp.Diff(tt.wantBios, bios["Attributes"]); diff != "" {
				t.Errorf("Bios attributes, current (-want +got):\n%s", diff)
			}
			settings, _ := bios["@Redfish.Settings"].(map[string]any)
			if got, _ := settings["SettingsObject"].(map[string]any); got["@odata.id"] != sys+"/Bios/Settings" {
				t.Errorf("@Redfish.Settings %v: want SettingsObject %s/Bios/Settings", settings, sys)
			}
			if diff := cmp.Diff(tt.wantPending, e.get(t, "bob", sys+"/Bios/Settings")["Attributes"]); diff != "" {
				t.Errorf("Bios/Settings attributes, pending (-want +got):\n%s", diff)
			}
			sb := e.get(t, "bob", sys+"/SecureBoot")
			if got, ok := sb["SecureBootCurrentBoot"]; !ok || got != tt.wantCurrent {
				t.Errorf("SecureBootCurrentBoot %v (present %t), want %v", got, ok, tt.wantCurrent)
			}
			if got := sb["SecureBootEnable"]; got != tt.secure {
				t.Errorf("SecureBootEnable %v, want %v (the next boot's)", got, tt.secure)
			}
		})
	}
}

// TestBootAllowableValues: the System advertises the boot modes its view
// says a PATCH accepts now, and BiosSetup (Ironic's "bios" boot device,
// which a VM cannot honour) is no target: a PATCH of it is a 400
// PropertyValueNotInList that reaches no backend.
func TestBootAllowableValues(t *testing.T) {
	e := newEnv(t)
	const sys = "/redfish/v1/Systems/team-b.vm3"
	e.fake.mu.Lock()
	v := e.fake.systems["team-b.vm3"]
	v.BootModes = []system.BootMode{system.BootUEFI}
	e.fake.bump(v)
	e.fake.mu.Unlock()
	boot := e.get(t, "bob", sys)["Boot"].(map[string]any)
	if diff := cmp.Diff([]any{"UEFI"}, boot["BootSourceOverrideMode@Redfish.AllowableValues"]); diff != "" {
		t.Errorf("BootSourceOverrideMode@Redfish.AllowableValues (-want +got):\n%s", diff)
	}
	for _, target := range boot["BootSourceOverrideTarget@Redfish.AllowableValues"].([]any) {
		if target == "BiosSetup" {
			t.Errorf("BiosSetup advertised: %v", boot["BootSourceOverrideTarget@Redfish.AllowableValues"])
		}
	}
	rec := e.do(t, req{method: http.MethodPatch, path: sys, user: "bob", body: `{"Boot":{"BootSourceOverrideTarget":"BiosSetup","BootSourceOverrideEnabled":"Once"}}`})
	checkWrite(t, e, rec, &errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/Boot/BootSourceOverrideTarget"}}, nil)
}
