package redfish

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestBiosAttributeRegistry follows what sushy does for Ironic's BIOS
// settings: the Bios names a registry, the Registries collection lists a
// file of that name, its Location serves an AttributeRegistry whose
// entries describe every attribute the Bios shows, with the values a PATCH
// of Bios/Settings accepts.
func TestBiosAttributeRegistry(t *testing.T) {
	e := newEnv(t)
	const sys = "/redfish/v1/Systems/team-b.vm3"
	bios := e.get(t, "bob", sys+"/Bios")
	name, _ := bios["AttributeRegistry"].(string)
	if name != "RedfishBridgeBios.1.0.0" {
		t.Fatalf("Bios AttributeRegistry %q", name)
	}
	var members []string
	for _, m := range e.get(t, "bob", "/redfish/v1/Registries")["Members"].([]any) {
		members = append(members, m.(map[string]any)["@odata.id"].(string))
	}
	if !slices.Contains(members, "/redfish/v1/Registries/"+name) {
		t.Fatalf("Registries %v do not list %s", members, name)
	}
	file := e.get(t, "bob", "/redfish/v1/Registries/"+name)
	wantFile := map[string]any{
		"@odata.id": "/redfish/v1/Registries/" + name, "@odata.type": "#MessageRegistryFile.v1_1_3.MessageRegistryFile",
		"Id": name, "Name": "BIOS Attribute Registry File", "Registry": name, "Languages": []any{"en"},
		"Location": []any{map[string]any{"Language": "en", "Uri": "/redfish/v1/Registries/" + name + "/" + name + ".json"}},
	}
	delete(file, "@odata.etag")
	if diff := cmp.Diff(wantFile, file); diff != "" {
		t.Errorf("registry file (-want +got):\n%s", diff)
	}
	reg := e.get(t, "bob", "/redfish/v1/Registries/"+name+"/"+name+".json")
	for k, want := range map[string]any{
		"@odata.type": "#AttributeRegistry.v1_3_9.AttributeRegistry", "Id": name, "Language": "en",
		"OwningEntity": "redfish-bridge", "RegistryVersion": "1.0.0",
	} {
		if reg[k] != want {
			t.Errorf("registry %s = %v, want %v", k, reg[k], want)
		}
	}
	entries := map[string]map[string]any{}
	for _, a := range reg["RegistryEntries"].(map[string]any)["Attributes"].([]any) {
		a := a.(map[string]any)
		entries[a["AttributeName"].(string)] = a
	}
	allowed := map[string][]string{"BootMode": {"Uefi", "Bios"}, "SecureBoot": {"Enabled", "Disabled"}}
	for attr := range bios["Attributes"].(map[string]any) {
		t.Run(attr, func(t *testing.T) {
			a, ok := entries[attr]
			if !ok {
				t.Fatalf("registry has no entry for Bios attribute %s", attr)
			}
			var values []string
			for _, v := range a["Value"].([]any) {
				values = append(values, v.(map[string]any)["ValueName"].(string))
				if v.(map[string]any)["ValueDisplayName"] == "" {
					t.Errorf("value %v has no ValueDisplayName", v)
				}
			}
			if diff := cmp.Diff(allowed[attr], values); diff != "" {
				t.Errorf("values (-PATCH accepts +registry):\n%s", diff)
			}
			for k, want := range map[string]any{"Type": "Enumeration", "ReadOnly": false, "ResetRequired": true, "CurrentValue": nil} {
				if got, ok := a[k]; !ok || got != want {
					t.Errorf("%s = %v (present %t), want %v", k, got, ok, want)
				}
			}
			if a["DisplayName"] == "" || a["HelpText"] == "" {
				t.Errorf("no DisplayName or HelpText: %v", a)
			}
		})
	}
	if len(entries) != len(bios["Attributes"].(map[string]any)) {
		t.Errorf("registry entries %d, Bios attributes %d", len(entries), len(bios["Attributes"].(map[string]any)))
	}
	if rec := e.do(t, req{path: "/redfish/v1/Registries/Nope.1.0.0/Nope.1.0.0.json", user: "bob"}); rec.Code != http.StatusNotFound {
		t.Errorf("unknown registry file: %d", rec.Code)
	}
}

// TestResetBios: the action the Bios names resets BootMode and SecureBoot
// to the VM's default (the fake plays a VM whose author wrote no
// bootloader: Bios, Secure Boot off), whatever body sushy sends; a
// parameter it does not take is refused.
func TestResetBios(t *testing.T) {
	const sys = "/redfish/v1/Systems/team-b.vm3"
	tests := []struct {
		name      string
		body      string
		wantErr   *errorInfo
		wantCalls []string
		wantAttrs map[string]any
	}{
		{name: "no body", wantCalls: []string{"resetbios team-b.vm3"}, wantAttrs: map[string]any{"BootMode": "Bios", "SecureBoot": "Disabled"}},
		{name: "empty object", body: `{}`, wantCalls: []string{"resetbios team-b.vm3"}, wantAttrs: map[string]any{"BootMode": "Bios", "SecureBoot": "Disabled"}},
		{
			name: "unknown parameter", body: `{"ResetType":"Hard"}`,
			wantErr:   &errorInfo{Status: 400, IDs: []string{"ActionParameterNotSupported"}, Related: []string{"#/ResetType"}},
			wantAttrs: map[string]any{"BootMode": "Uefi", "SecureBoot": "Enabled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.fake.mu.Lock()
			v := e.fake.systems["team-b.vm3"]
			v.BootMode, v.SecureBoot = system.BootUEFI, true
			v.Boot.Mode, v.Boot.SecureBoot = system.BootUEFI, system.SecureBootEnabled
			e.fake.bump(v)
			e.fake.mu.Unlock()
			action := e.get(t, "bob", sys+"/Bios")["Actions"].(map[string]any)["#Bios.ResetBios"].(map[string]any)
			if action["target"] != sys+"/Bios/Actions/Bios.ResetBios" {
				t.Fatalf("ResetBios target %v", action["target"])
			}
			info := e.get(t, "bob", action["@Redfish.ActionInfo"].(string))
			if params, _ := json.Marshal(info["Parameters"]); string(params) != "[]" {
				t.Errorf("ActionInfo Parameters %s, want []", params)
			}
			rec := e.do(t, req{method: http.MethodPost, path: action["target"].(string), user: "bob", body: tt.body})
			checkWrite(t, e, rec, tt.wantErr, tt.wantCalls)
			if diff := cmp.Diff(tt.wantAttrs, e.get(t, "bob", sys+"/Bios/Settings")["Attributes"]); diff != "" {
				t.Errorf("pending attributes (-want +got):\n%s", diff)
			}
		})
	}
}
