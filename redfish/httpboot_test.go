package redfish

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestPatchUefiHttp: Boot.HttpBootUri is set with the target in one PATCH
// (sushy's set_system_boot_options), read back, cleared with null; a bad
// URI or UefiHttp on a system that does not boot UEFI is a 400 that writes
// nothing; UefiHttp is advertised only where it works.
func TestPatchUefiHttp(t *testing.T) {
	const path = "/redfish/v1/Systems/team-a.vm1"
	tests := []struct {
		name      string
		legacy    bool
		body      string
		wantCalls []string
		wantErr   *errorInfo
		wantURI   any
	}{
		{
			name:      "target, once and URI together",
			body:      `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideEnabled":"Once","HttpBootUri":"https://images.example/boot.iso"}}`,
			wantCalls: []string{"boot team-a.vm1 UefiHttp Once - uri=https://images.example/boot.iso"},
			wantURI:   "https://images.example/boot.iso",
		},
		{
			name:      "null clears it",
			body:      `{"Boot":{"BootSourceOverrideTarget":"Hdd","HttpBootUri":null}}`,
			wantCalls: []string{"boot team-a.vm1 Hdd - - uri="},
			wantURI:   nil,
		},
		{
			// What Ironic 39's sushy 5.13 sends for boot device disk on a
			// system that shows HttpBootUri set (its only_if_set).
			name:      "sushy 5.13's change of target clears it",
			body:      `{"Boot": {"BootSourceOverrideTarget": "Hdd", "HttpBootUri": null, "BootSourceOverrideEnabled": "Once"}}`,
			wantCalls: []string{"boot team-a.vm1 Hdd Once - uri="},
			wantURI:   nil,
		},
		{
			name:      "URI alone",
			body:      `{"Boot":{"HttpBootUri":"http://10.0.0.1/x.iso"}}`,
			wantCalls: []string{"boot team-a.vm1 - - - uri=http://10.0.0.1/x.iso"},
			wantURI:   "http://10.0.0.1/x.iso",
		},
		{
			name:    "not an http(s) URL",
			body:    `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","HttpBootUri":"tftp://10.0.0.1/x.efi"}}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueFormatError"}, Related: []string{"#/Boot/HttpBootUri"}},
			wantURI: nil,
		},
		{
			name:    "wrong type",
			body:    `{"Boot":{"HttpBootUri":42}}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueTypeError"}, Related: []string{"#/Boot/HttpBootUri"}},
			wantURI: nil,
		},
		{
			name:    "UefiHttp on a Legacy system",
			legacy:  true,
			body:    `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","HttpBootUri":"https://images.example/boot.iso"}}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueConflict"}, Related: []string{"#/Boot/BootSourceOverrideTarget", "#/Boot/BootSourceOverrideMode"}},
			wantURI: nil,
		},
		{
			name:      "UefiHttp with the switch to UEFI in the same PATCH",
			legacy:    true,
			body:      `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideMode":"UEFI","HttpBootUri":"https://images.example/boot.iso"}}`,
			wantCalls: []string{"boot team-a.vm1 UefiHttp - UEFI uri=https://images.example/boot.iso"},
			wantURI:   "https://images.example/boot.iso",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			key := system.Key{Namespace: "team-a", Name: "vm1"}
			_ = e.fake.write(key, "setup", func(v *SystemView) error {
				v.Boot.HTTPBootURI = "https://old.example/old.iso"
				if tt.legacy {
					v.BootMode = system.BootLegacy
					v.Boot.HTTPBootURI = ""
				}
				return nil
			})
			e.fake.takeCalls()
			if tt.wantErr != nil {
				tt.wantCalls = nil
				if !tt.legacy {
					tt.wantURI = "https://old.example/old.iso"
				}
			}
			rec := e.do(t, req{method: http.MethodPatch, path: path, user: "alice", body: tt.body})
			checkWrite(t, e, rec, tt.wantErr, tt.wantCalls)
			boot := e.get(t, "alice", path)["Boot"].(map[string]any)
			if diff := cmp.Diff(tt.wantURI, boot["HttpBootUri"]); diff != "" {
				t.Errorf("HttpBootUri read back (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUefiHttpAdvertisedOnlyUnderUEFI(t *testing.T) {
	for _, mode := range system.BootModes {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			_ = e.fake.write(system.Key{Namespace: "team-a", Name: "vm1"}, "setup", func(v *SystemView) error {
				v.BootMode = mode
				return nil
			})
			boot := e.get(t, "alice", "/redfish/v1/Systems/team-a.vm1")["Boot"].(map[string]any)
			var targets []string
			for _, v := range boot["BootSourceOverrideTarget@Redfish.AllowableValues"].([]any) {
				targets = append(targets, v.(string))
			}
			if got, want := slices.Contains(targets, "UefiHttp"), mode == system.BootUEFI; got != want {
				t.Errorf("boot mode %s: UefiHttp advertised %t, want %t (%v)", mode, got, want, targets)
			}
		})
	}
}

// TestUSBStickSlot: a usb slot shows as a USB stick (Ironic's
// config_via_removable looks for MediaTypes USBStick), a cd slot as CD/DVD.
func TestUSBStickSlot(t *testing.T) {
	e := newEnv(t)
	_ = e.fake.write(system.Key{Namespace: "team-a", Name: "vm1"}, "setup", func(v *SystemView) error {
		v.Slots = append(v.Slots, system.MediaSlot{Slot: "usb0"})
		return nil
	})
	v := newValidator(t)
	for slot, want := range map[string][]any{"cd0": {"CD", "DVD"}, "usb0": {"USBStick"}} {
		for _, base := range []string{"/redfish/v1/Managers/team-a.vm1/VirtualMedia/", "/redfish/v1/Systems/team-a.vm1/VirtualMedia/"} {
			body := e.get(t, "alice", base+slot)
			v.validate(t, base+slot, body)
			if diff := cmp.Diff(want, body["MediaTypes"]); diff != "" {
				t.Errorf("%s%s MediaTypes (-want +got):\n%s", base, slot, diff)
			}
		}
	}
}

// checkWrite checks a PATCH's answer (wantErr, or 204 when nil) and the
// backend writes it made.
func checkWrite(t *testing.T, e *env, rec *httptest.ResponseRecorder, wantErr *errorInfo, wantCalls []string) {
	t.Helper()
	if wantErr != nil {
		if diff := cmp.Diff(*wantErr, errInfo(t, rec)); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
	} else if rec.Code != http.StatusNoContent {
		t.Errorf("status %d: %s", rec.Code, rec.Body)
	}
	if diff := cmp.Diff(wantCalls, e.fake.takeCalls()); diff != "" {
		t.Errorf("backend calls (-want +got):\n%s", diff)
	}
}
