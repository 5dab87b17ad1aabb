package redfish

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

func TestBiosSettings(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		body      string
		ifMatch   string
		setup     func(v *SystemView) // the system before the PATCH
		wantErr   *errorInfo
		wantCalls []string
		wantAttrs map[string]any
	}{
		{
			name: "boot mode", path: "/Bios/Settings", body: `{"Attributes":{"BootMode":"Bios"}}`,
			wantCalls: []string{"boot team-b.vm3 - - Legacy"},
			wantAttrs: map[string]any{"BootMode": "Bios", "SecureBoot": "Disabled"},
		},
		{
			name: "both, with apply time", path: "/Bios/Settings", body: `{"Attributes":{"BootMode":"Uefi","SecureBoot":"Enabled"},"@Redfish.SettingsApplyTime":{"ApplyTime":"OnReset"}}`,
			wantCalls: []string{"boot team-b.vm3 - - UEFI", "secureboot team-b.vm3 true"},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Enabled"},
		},
		{
			name: "unknown attribute", path: "/Bios/Settings", body: `{"Attributes":{"ProcTurboMode":"Enabled"}}`,
			wantErr:   &errorInfo{Status: 400, IDs: []string{"PropertyUnknown"}, Related: []string{"#/Attributes/ProcTurboMode"}},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Disabled"},
		},
		{
			name: "bad value", path: "/Bios/Settings", body: `{"Attributes":{"BootMode":"UEFI"}}`,
			wantErr:   &errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/Attributes/BootMode"}},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Disabled"},
		},
		{
			name: "stale etag", path: "/Bios/Settings", body: `{"Attributes":{"BootMode":"Bios"}}`, ifMatch: `W/"1"`,
			wantErr:   &errorInfo{Status: 412, IDs: []string{"PreconditionFailed"}},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Disabled"},
		},
		{
			name: "secure boot resource", path: "/SecureBoot", body: `{"SecureBootEnable":true}`, ifMatch: "{weak}",
			wantCalls: []string{"secureboot team-b.vm3 true"},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Enabled"},
		},
		{
			name: "secure boot resource off", path: "/SecureBoot", body: `{"SecureBootEnable":false}`, ifMatch: "{weak}",
			setup:     func(v *SystemView) { v.SecureBoot = true },
			wantCalls: []string{"secureboot team-b.vm3 false"},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Disabled"},
		},
		{
			name: "secure boot resource in bios mode", path: "/SecureBoot", body: `{"SecureBootEnable":true}`,
			setup:     func(v *SystemView) { v.BootMode = system.BootLegacy },
			wantErr:   &errorInfo{Status: 400, IDs: []string{"PropertyValueConflict"}, Related: []string{"#/SecureBootEnable"}},
			wantAttrs: map[string]any{"BootMode": "Bios", "SecureBoot": "Disabled"},
		},
		{
			name: "secure boot attribute in bios mode", path: "/Bios/Settings", body: `{"Attributes":{"SecureBoot":"Enabled"}}`,
			setup:     func(v *SystemView) { v.BootMode = system.BootLegacy },
			wantErr:   &errorInfo{Status: 400, IDs: []string{"PropertyValueConflict"}, Related: []string{"#/Attributes/SecureBoot"}},
			wantAttrs: map[string]any{"BootMode": "Bios", "SecureBoot": "Disabled"},
		},
		{
			name: "to bios with secure boot on", path: "/Bios/Settings", body: `{"Attributes":{"BootMode":"Bios"}}`,
			setup:     func(v *SystemView) { v.SecureBoot = true },
			wantErr:   &errorInfo{Status: 400, IDs: []string{"PropertyValueConflict"}, Related: []string{"#/Attributes/BootMode"}},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Enabled"},
		},
		{
			// Secure Boot goes off before the switch to Bios, or the switch
			// would be refused.
			name: "to bios turning secure boot off", path: "/Bios/Settings", ifMatch: "{weak}",
			body:      `{"Attributes":{"BootMode":"Bios","SecureBoot":"Disabled"}}`,
			setup:     func(v *SystemView) { v.SecureBoot = true },
			wantCalls: []string{"secureboot team-b.vm3 false", "boot team-b.vm3 - - Legacy"},
			wantAttrs: map[string]any{"BootMode": "Bios", "SecureBoot": "Disabled"},
		},
		{
			// and comes on after the switch to Uefi.
			name: "to uefi turning secure boot on", path: "/Bios/Settings",
			body:      `{"Attributes":{"SecureBoot":"Enabled","BootMode":"Uefi"}}`,
			setup:     func(v *SystemView) { v.BootMode = system.BootLegacy },
			wantCalls: []string{"boot team-b.vm3 - - UEFI", "secureboot team-b.vm3 true"},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Enabled"},
		},
		{
			name: "secure boot read-only property", path: "/SecureBoot", body: `{"SecureBootCurrentBoot":"Enabled"}`,
			wantErr:   &errorInfo{Status: 400, IDs: []string{"PropertyNotWritable"}, Related: []string{"#/SecureBootCurrentBoot"}},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Disabled"},
		},
		{
			name: "secure boot wrong type", path: "/SecureBoot", body: `{"SecureBootEnable":"yes"}`,
			wantErr:   &errorInfo{Status: 400, IDs: []string{"PropertyValueTypeError"}, Related: []string{"#/SecureBootEnable"}},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Disabled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			const sys = "/redfish/v1/Systems/team-b.vm3"
			if tt.setup != nil {
				e.fake.mu.Lock()
				tt.setup(e.fake.systems["team-b.vm3"])
				e.fake.bump(e.fake.systems["team-b.vm3"])
				e.fake.mu.Unlock()
			}
			r := req{method: http.MethodPatch, path: sys + tt.path, user: "bob", body: tt.body}
			if tt.ifMatch != "" {
				r.header = map[string]string{"If-Match": currentETag(t, e, "bob", r.path, tt.ifMatch)}
			}
			rec := e.do(t, r)
			checkWrite(t, e, rec, tt.wantErr, tt.wantCalls)
			bios := e.get(t, "bob", sys+"/Bios")
			if diff := cmp.Diff(tt.wantAttrs, bios["Attributes"]); diff != "" {
				t.Errorf("Bios attributes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(bios["Attributes"], e.get(t, "bob", sys+"/Bios/Settings")["Attributes"]); diff != "" {
				t.Errorf("Bios/Settings differs from Bios:\n%s", diff)
			}
			sb := e.get(t, "bob", sys+"/SecureBoot")
			if got, want := sb["SecureBootEnable"], tt.wantAttrs["SecureBoot"] == "Enabled"; got != want {
				t.Errorf("SecureBootEnable %v, want %v", got, want)
			}
		})
	}
}
