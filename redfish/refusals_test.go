package redfish

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

// refusal is the first message of a Redfish error answer, as a client
// reads it.
type refusal struct {
	Status  int
	ID      string // without the registry prefix
	Args    []string
	Related []string
}

// readRefusal is [testutil.ReadRefusal] of rec, as a refusal.
func readRefusal(t *testing.T, rec *httptest.ResponseRecorder) (refusal, string) {
	t.Helper()
	if baseRegistryID+"." != testutil.BaseMessagePrefix {
		t.Fatalf("testutil.BaseMessagePrefix %q, the service answers %s.", testutil.BaseMessagePrefix, baseRegistryID)
	}
	r, why := testutil.ReadRefusal(t, rec.Code, rec.Body.Bytes())
	return refusal(r), why
}

// TestRefusalsNameWhatAndWhy walks every refusal the boot, power and media
// paths decide where the request enters (before any backend call): each
// names the property and the value sent (MessageArgs, RelatedProperties)
// and says why in its Resolution. The refusals the backend decides are
// backend's TestRefusalsNameWhatAndWhy, on a real apiserver.
func TestRefusalsNameWhatAndWhy(t *testing.T) {
	const (
		sys    = "/redfish/v1/Systems/team-a.vm1"
		insert = "/redfish/v1/Systems/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia"
		viaMgr = "/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia"
		eject  = "/redfish/v1/Systems/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.EjectMedia"
		reset  = "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset"
		img    = `"Image":"http://images.example/a.iso"`
	)
	tests := []struct {
		name         string
		method, path string
		body         string
		want         refusal
		why          string // in the Resolution
	}{
		{"target BiosSetup", http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideTarget":"BiosSetup"}}`,
			refusal{400, "PropertyValueNotInList", []string{"BiosSetup", "BootSourceOverrideTarget"}, []string{"#/Boot/BootSourceOverrideTarget"}}, "firmware setup"},
		{"target unknown", http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideTarget":"Floppy"}}`,
			refusal{400, "PropertyValueNotInList", []string{"Floppy", "BootSourceOverrideTarget"}, []string{"#/Boot/BootSourceOverrideTarget"}}, "accepts None, Pxe, Hdd, Cd, UefiHttp"},
		{"enabled unknown", http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideEnabled":"Twice"}}`,
			refusal{400, "PropertyValueNotInList", []string{"Twice", "BootSourceOverrideEnabled"}, []string{"#/Boot/BootSourceOverrideEnabled"}}, "accepts Disabled, Once, Continuous"},
		{"mode unknown", http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideMode":"Bios"}}`,
			refusal{400, "PropertyValueNotInList", []string{"Bios", "BootSourceOverrideMode"}, []string{"#/Boot/BootSourceOverrideMode"}}, "accepts UEFI, Legacy"},
		{"HttpBootUri not http", http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","HttpBootUri":"tftp://boot.example/a.efi"}}`,
			refusal{400, "PropertyValueFormatError", []string{"tftp://boot.example/a.efi", "HttpBootUri"}, []string{"#/Boot/HttpBootUri"}}, "http or https URL"},
		{"UefiHttp under Legacy", http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideMode":"Legacy","HttpBootUri":"http://boot.example/a.efi"}}`,
			refusal{400, "PropertyValueConflict", []string{"BootSourceOverrideTarget", "BootSourceOverrideMode"}, []string{"#/Boot/BootSourceOverrideTarget", "#/Boot/BootSourceOverrideMode"}}, "UefiHttp needs boot mode UEFI, and the boot mode would be Legacy"},
		{"Bios BootMode unknown", http.MethodPatch, sys + "/Bios/Settings", `{"Attributes":{"BootMode":"Legacy"}}`,
			refusal{400, "PropertyValueNotInList", []string{"Legacy", "BootMode"}, []string{"#/Attributes/BootMode"}}, "accepts Uefi, Bios"},
		{"Bios SecureBoot unknown", http.MethodPatch, sys + "/Bios/Settings", `{"Attributes":{"SecureBoot":"On"}}`,
			refusal{400, "PropertyValueNotInList", []string{"On", "SecureBoot"}, []string{"#/Attributes/SecureBoot"}}, "accepts Enabled, Disabled"},
		{"reset Nmi", http.MethodPost, reset, `{"ResetType":"Nmi"}`,
			refusal{400, "PropertyValueNotInList", []string{"Nmi", "ResetType"}, []string{"#/ResetType"}}, "cannot inject an NMI"},
		{"reset unknown", http.MethodPost, reset, `{"ResetType":"PowerCycle"}`,
			refusal{400, "PropertyValueNotInList", []string{"PowerCycle", "ResetType"}, []string{"#/ResetType"}}, "accepts On, ForceOn, ForceOff"},
		{"reset without type", http.MethodPost, reset, `{}`,
			refusal{400, "ActionParameterMissing", []string{"ComputerSystem.Reset", "ResetType"}, []string{"#/ResetType"}}, "required parameter"},
		{"insert without Image", http.MethodPost, insert, `{"Inserted":true}`,
			refusal{400, "ActionParameterMissing", []string{"VirtualMedia.InsertMedia", "Image"}, []string{"#/Image"}}, "required parameter"},
		{"insert Image not http", http.MethodPost, insert, `{"Image":"nfs://images.example/a.iso"}`,
			refusal{400, "ActionParameterValueFormatError", []string{"nfs://images.example/a.iso", "Image", "VirtualMedia.InsertMedia"}, []string{"#/Image"}}, "http or https URL"},
		{"insert Inserted false", http.MethodPost, insert, `{` + img + `,"Inserted":false}`,
			refusal{400, "PropertyValueNotInList", []string{"false", "Inserted"}, []string{"#/Inserted"}}, "always inserts"},
		{"insert WriteProtected false", http.MethodPost, viaMgr, `{` + img + `,"WriteProtected":false}`,
			refusal{400, "PropertyValueNotInList", []string{"false", "WriteProtected"}, []string{"#/WriteProtected"}}, "write-protected"},
		{"insert TransferProtocolType NFS", http.MethodPost, insert, `{` + img + `,"TransferProtocolType":"NFS"}`,
			refusal{400, "PropertyValueNotInList", []string{"NFS", "TransferProtocolType"}, []string{"#/TransferProtocolType"}}, "fetches the image itself"},
		{"insert TransferProtocolType not the URL's", http.MethodPost, insert, `{` + img + `,"TransferProtocolType":"HTTPS"}`,
			refusal{400, "PropertyValueConflict", []string{"TransferProtocolType", "Image"}, []string{"#/TransferProtocolType", "#/Image"}}, "HTTPS is not the scheme of Image (HTTP)"},
		{"insert TransferMethod Upload", http.MethodPost, insert, `{` + img + `,"TransferMethod":"Upload"}`,
			refusal{400, "PropertyValueNotInList", []string{"Upload", "TransferMethod"}, []string{"#/TransferMethod"}}, "does not upload"},
		{"insert UserName alone", http.MethodPost, insert, `{` + img + `,"UserName":"u"}`,
			refusal{400, "ActionParameterMissing", []string{"VirtualMedia.InsertMedia", "Password"}, []string{"#/Password"}}, "send both, or neither"},
		{"insert Password alone", http.MethodPost, insert, `{` + img + `,"Password":"p"}`,
			refusal{400, "ActionParameterMissing", []string{"VirtualMedia.InsertMedia", "UserName"}, []string{"#/UserName"}}, "send both, or neither"},
		{"insert unknown parameter", http.MethodPost, insert, `{` + img + `,"MediaType":"CD"}`,
			refusal{400, "ActionParameterNotSupported", []string{"MediaType", "VirtualMedia.InsertMedia"}, []string{"#/MediaType"}}, "Remove the parameter"},
		{"eject with a parameter", http.MethodPost, eject, `{"Force":true}`,
			refusal{400, "ActionParameterNotSupported", []string{"Force", "VirtualMedia.EjectMedia"}, []string{"#/Force"}}, "Remove the parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			rec := e.do(t, req{method: tt.method, path: tt.path, body: tt.body, user: "admin"})
			got, why := readRefusal(t, rec)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("refusal (-want +got):\n%s\nbody %s", diff, rec.Body)
			}
			if !strings.Contains(why, tt.why) {
				t.Errorf("Resolution %q does not say %q", why, tt.why)
			}
			if calls := e.fake.takeCalls(); len(calls) != 0 {
				t.Errorf("refused, and still wrote: %v", calls)
			}
		})
	}
}
