package redfish

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNullRefused sends null for every property and action parameter a
// client can write. None of them gives null a meaning here (the schemas of
// Boot's overrides, SecureBootEnable and Bios attributes allow it, but a
// BMC that reads it as the zero value would, for one, turn Secure Boot off),
// so each answers 400 with the type error naming the property, and nothing
// reaches the backend.
func TestNullRefused(t *testing.T) {
	const (
		sys   = "/redfish/v1/Systems/team-a.vm1"
		media = "/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0"
		image = `"Image":"https://img.example/a.iso"`
	)
	typeErr := func(related string) *errorInfo {
		return &errorInfo{Status: 400, IDs: []string{"PropertyValueTypeError"}, Related: []string{related}}
	}
	paramErr := func(related string) *errorInfo {
		return &errorInfo{Status: 400, IDs: []string{"ActionParameterValueTypeError"}, Related: []string{related}}
	}
	notAllowed := &errorInfo{Status: 405, IDs: []string{"ActionNotSupported"}}
	tests := []struct {
		name, method, path, body string
		want                     *errorInfo
	}{
		{"Boot", http.MethodPatch, sys, `{"Boot":null}`, typeErr("#/Boot")},
		{"Boot.BootSourceOverrideTarget", http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideTarget":null}}`, typeErr("#/Boot/BootSourceOverrideTarget")},
		{"Boot.BootSourceOverrideEnabled", http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":null}}`, typeErr("#/Boot/BootSourceOverrideEnabled")},
		{"Boot.BootSourceOverrideMode", http.MethodPatch, sys, `{"Boot":{"BootSourceOverrideMode":null}}`, typeErr("#/Boot/BootSourceOverrideMode")},
		{"SecureBootEnable", http.MethodPatch, sys + "/SecureBoot", `{"SecureBootEnable":null}`, typeErr("#/SecureBootEnable")},
		{"Bios Attributes", http.MethodPatch, sys + "/Bios/Settings", `{"Attributes":null}`, typeErr("#/Attributes")},
		{"Bios BootMode", http.MethodPatch, sys + "/Bios/Settings", `{"Attributes":{"BootMode":null}}`, typeErr("#/Attributes/BootMode")},
		{"Bios SecureBoot", http.MethodPatch, sys + "/Bios/Settings", `{"Attributes":{"SecureBoot":null,"BootMode":"Uefi"}}`, typeErr("#/Attributes/SecureBoot")},
		{"Reset ResetType", http.MethodPost, sys + "/Actions/ComputerSystem.Reset", `{"ResetType":null}`, paramErr("#/ResetType")},
		{"InsertMedia Image", http.MethodPost, media + "/Actions/VirtualMedia.InsertMedia", `{"Image":null}`, paramErr("#/Image")},
		{"InsertMedia Inserted", http.MethodPost, media + "/Actions/VirtualMedia.InsertMedia", `{` + image + `,"Inserted":null}`, paramErr("#/Inserted")},
		{"InsertMedia WriteProtected", http.MethodPost, media + "/Actions/VirtualMedia.InsertMedia", `{` + image + `,"WriteProtected":null}`, paramErr("#/WriteProtected")},
		{"InsertMedia TransferProtocolType", http.MethodPost, media + "/Actions/VirtualMedia.InsertMedia", `{` + image + `,"TransferProtocolType":null}`, paramErr("#/TransferProtocolType")},
		{"InsertMedia TransferMethod", http.MethodPost, media + "/Actions/VirtualMedia.InsertMedia", `{` + image + `,"TransferMethod":null}`, paramErr("#/TransferMethod")},
		{"Session UserName", http.MethodPost, "/redfish/v1/SessionService/Sessions", `{"UserName":null,"Password":"alice-pw"}`, typeErr("#/UserName")},
		{"Session Password", http.MethodPost, "/redfish/v1/SessionService/Sessions", `{"UserName":"alice","Password":null}`, typeErr("#/Password")},
		// Accounts live in a Secret: the account service takes no writes.
		{"ManagerAccount Password", http.MethodPatch, "/redfish/v1/AccountService/Accounts/alice", `{"Password":null}`, notAllowed},
		{"AccountService", http.MethodPatch, "/redfish/v1/AccountService", `{"ServiceEnabled":null}`, notAllowed},
		{"InsertMedia UserName", http.MethodPost, media + "/Actions/VirtualMedia.InsertMedia", `{` + image + `,"UserName":null,"Password":"p"}`, paramErr("#/UserName")},
		{"InsertMedia Password", http.MethodPost, media + "/Actions/VirtualMedia.InsertMedia", `{` + image + `,"UserName":"u","Password":null}`, paramErr("#/Password")},
		{"VirtualMedia VerifyCertificate", http.MethodPatch, media, `{"VerifyCertificate":null}`, typeErr("#/VerifyCertificate")},
		{"VirtualMedia Image", http.MethodPatch, media, `{"Image":null}`, &errorInfo{Status: 400, IDs: []string{"PropertyNotWritable"}, Related: []string{"#/Image"}}},
		{"Certificates CertificateString", http.MethodPost, media + "/Certificates", `{"CertificateString":null,"CertificateType":"PEM"}`, typeErr("#/CertificateString")},
		{"Certificates CertificateType", http.MethodPost, media + "/Certificates", `{"CertificateString":"x","CertificateType":null}`, typeErr("#/CertificateType")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			user := "alice"
			if tt.path == "/redfish/v1/SessionService/Sessions" {
				user = ""
			}
			rec := e.do(t, req{method: tt.method, path: tt.path, user: user, body: tt.body})
			if diff := cmp.Diff(*tt.want, errInfo(t, rec)); diff != "" {
				t.Errorf("%s %s: error (-want +got):\n%s", tt.method, tt.body, diff)
			}
			if calls := e.fake.takeCalls(); len(calls) != 0 {
				t.Errorf("%s reached the backend: %v", tt.body, calls)
			}
		})
	}
}
