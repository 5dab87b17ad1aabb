package backend_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/crds"
	"github.com/redfish-bridge/redfish-bridge/harness/demo"
	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/kubevirt"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// refusal is the first message of a Redfish error answer, as a client
// reads it.
type refusal struct {
	Status  int
	ID      string // without the registry prefix
	Args    []string
	Related []string
}

// readRefusal is [testutil.ReadRefusal] as a refusal.
func readRefusal(t *testing.T, status int, body []byte) (refusal, string) {
	t.Helper()
	r, why := testutil.ReadRefusal(t, status, body)
	return refusal(r), why
}

// TestRefusalsNameWhatAndWhy walks, through the real HTTP handler over the
// backend on a real apiserver, every refusal the boot, power and media
// paths decide in the backend (power's and media's decisions on the VM as
// read; the ones decided where the request enters are redfish's
// TestRefusalsNameWhatAndWhy): each names the property and the value sent
// (MessageArgs, RelatedProperties) and says why in its Resolution. A
// password in a URL is never answered. Each request is sent to a fresh
// System of its kind (systemKinds), set up by its writes.
func TestRefusalsNameWhatAndWhy(t *testing.T) {
	s := newStack(t, crds.Variants[0], nil)
	const (
		pendingUefiHttp = `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideEnabled":"Once","HttpBootUri":"http://images.example/boot.efi"}}`
		insert          = "/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia"
		legacyVM        = "bridge-firmware"
		authoredVM      = "authored-uefi"
		secureVM        = "bridge-firmware-uefi-secureboot"
		authorSecureVM  = "authored-uefi-author-secureboot"
	)
	kinds := map[string]systemKind{authorSecureVM: {name: authorSecureVM, sample: func(namespace, name string) *unstructured.Unstructured {
		vm := demo.SampleVM(namespace, name)
		if err := unstructured.SetNestedField(vm.Object, true, append(append([]string(nil), kubevirt.EFI...), kubevirt.KeySecureBoot)...); err != nil {
			t.Fatal(err)
		}
		return vm
	}}}
	for _, k := range systemKinds {
		kinds[k.name] = k
	}
	// An HTTPS image server whose private CA the bridge does not trust.
	ca, err := testca.New("untrusted image CA")
	if err != nil {
		t.Fatal(err)
	}
	untrusted, err := ca.NewServer(http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(untrusted.Close)
	tests := []struct {
		name  string
		kind  string
		setup []write
		path  string // below the System; a POST when it names an action
		body  string
		want  refusal
		why   string // in the Resolution
	}{
		{name: "UefiHttp without HttpBootUri", kind: authoredVM,
			body: `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideEnabled":"Once"}}`,
			want: refusal{400, "PropertyValueIncorrect", []string{"Boot/BootSourceOverrideTarget", "UefiHttp"}, []string{"#/Boot/BootSourceOverrideTarget"}},
			why:  "UefiHttp needs Boot.HttpBootUri"},
		{name: "HttpBootUri cleared under a pending UefiHttp", kind: authoredVM, setup: []write{{"", pendingUefiHttp}},
			body: `{"Boot":{"HttpBootUri":null}}`,
			want: refusal{400, "PropertyValueIncorrect", []string{"Boot/HttpBootUri", ""}, []string{"#/Boot/HttpBootUri"}},
			why:  "UefiHttp needs Boot.HttpBootUri"},
		{name: "UefiHttp armed again without HttpBootUri", kind: authoredVM,
			setup: []write{{"", `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideEnabled":"Disabled"}}`}},
			body:  `{"Boot":{"BootSourceOverrideEnabled":"Once"}}`,
			want:  refusal{400, "PropertyValueIncorrect", []string{"Boot/BootSourceOverrideEnabled", "Once"}, []string{"#/Boot/BootSourceOverrideEnabled"}},
			why:   "UefiHttp needs Boot.HttpBootUri"},
		{name: "Legacy under a pending UefiHttp", kind: authoredVM, setup: []write{{"", pendingUefiHttp}},
			body: `{"Boot":{"BootSourceOverrideMode":"Legacy"}}`,
			want: refusal{400, "PropertyValueIncorrect", []string{"Boot/BootSourceOverrideMode", "Legacy"}, []string{"#/Boot/BootSourceOverrideMode"}},
			why:  "UefiHttp needs boot mode UEFI, and the boot mode would be Legacy"},
		{name: "Legacy under the author's Secure Boot", kind: authorSecureVM,
			body: `{"Boot":{"BootSourceOverrideMode":"Legacy"}}`,
			want: refusal{400, "PropertyValueConflict", []string{"Boot/BootSourceOverrideMode", "SecureBootEnable"}, []string{"#/Boot/BootSourceOverrideMode"}},
			why:  "Secure Boot is enabled (the VirtualMachine's firmware.bootloader.efi.secureBoot)"},
		{name: "Legacy while Secure Boot is enabled", kind: secureVM,
			body: `{"Boot":{"BootSourceOverrideMode":"Legacy"}}`,
			want: refusal{400, "PropertyValueConflict", []string{"Boot/BootSourceOverrideMode", "SecureBootEnable"}, []string{"#/Boot/BootSourceOverrideMode"}},
			why:  "BootSourceOverrideMode Legacy is refused while it is"},
		{name: "Secure Boot under Legacy", kind: legacyVM,
			path: "/SecureBoot", body: `{"SecureBootEnable":true}`,
			want: refusal{400, "PropertyValueConflict", []string{"SecureBootEnable", "BootSourceOverrideMode"}, []string{"#/SecureBootEnable"}},
			why:  "Secure Boot needs boot mode UEFI and the system boots Legacy"},
		{name: "Bios SecureBoot under Legacy", kind: legacyVM,
			path: "/Bios/Settings", body: `{"Attributes":{"SecureBoot":"Enabled"}}`,
			want: refusal{400, "PropertyValueConflict", []string{"Attributes/SecureBoot", "Attributes/BootMode"}, []string{"#/Attributes/SecureBoot"}},
			why:  "Secure Boot needs boot mode UEFI"},
		{name: "Bios BootMode Bios under the author's Secure Boot", kind: authorSecureVM,
			path: "/Bios/Settings", body: `{"Attributes":{"BootMode":"Bios"}}`,
			want: refusal{400, "PropertyValueConflict", []string{"Attributes/BootMode", "Attributes/SecureBoot"}, []string{"#/Attributes/BootMode"}},
			why:  "Disable Secure Boot (SecureBootEnable false) first"},
		{name: "Bios BootMode Bios while Secure Boot is enabled", kind: secureVM,
			path: "/Bios/Settings", body: `{"Attributes":{"BootMode":"Bios"}}`,
			want: refusal{400, "PropertyValueConflict", []string{"Attributes/BootMode", "Attributes/SecureBoot"}, []string{"#/Attributes/BootMode"}},
			why:  "Secure Boot is enabled"},
		{name: "HttpBootUri at the metadata address", kind: authoredVM,
			body: `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideEnabled":"Once","HttpBootUri":"http://169.254.169.254/boot.efi"}}`,
			want: refusal{400, "PropertyValueIncorrect", []string{"Boot/HttpBootUri", "http://169.254.169.254/boot.efi"}, []string{"#/Boot/HttpBootUri"}},
			why:  "cloud metadata address"},
		{name: "HttpBootUri with credentials", kind: authoredVM,
			body: `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideEnabled":"Once","HttpBootUri":"http://u:s3cret@images.example/boot.efi"}}`,
			want: refusal{400, "PropertyValueIncorrect", []string{"Boot/HttpBootUri", "http://xxxxx@images.example/boot.efi"}, []string{"#/Boot/HttpBootUri"}},
			why:  "credentials in the URL are not accepted"},
		{name: "Image at the metadata address", kind: authoredVM,
			path: insert, body: `{"Image":"http://169.254.169.254/a.iso"}`,
			want: refusal{400, "ActionParameterValueFormatError", []string{"http://169.254.169.254/a.iso", "Image", "VirtualMedia.InsertMedia"}, []string{"#/Image"}},
			why:  "cloud metadata address"},
		{name: "Image with credentials", kind: authoredVM,
			path: insert, body: `{"Image":"http://u:s3cret@images.example/a.iso"}`,
			want: refusal{400, "ActionParameterValueFormatError", []string{"http://xxxxx@images.example/a.iso", "Image", "VirtualMedia.InsertMedia"}, []string{"#/Image"}},
			why:  "credentials in the URL are not accepted"},
		{name: "Image from a server whose certificate is not trusted", kind: authoredVM,
			path: insert, body: `{"Image":"` + untrusted.URL + `/a.iso"}`,
			want: refusal{400, "ActionParameterValueFormatError", []string{untrusted.URL + "/a.iso", "Image", "VirtualMedia.InsertMedia"}, []string{"#/Image"}},
			why:  "not trusted (x509: certificate signed by unknown authority): POST its CA to the slot's Certificates"},
		{name: "HttpBootUri from a server whose certificate is not trusted", kind: authoredVM,
			body: `{"Boot":{"BootSourceOverrideTarget":"UefiHttp","BootSourceOverrideEnabled":"Once","HttpBootUri":"` + untrusted.URL + `/boot.efi"}}`,
			want: refusal{400, "PropertyValueIncorrect", []string{"Boot/HttpBootUri", untrusted.URL + "/boot.efi"}, []string{"#/Boot/HttpBootUri"}},
			why:  "x509: certificate signed by unknown authority"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := kinds[tt.kind]
			name := fmt.Sprintf("refused-%d", i)
			if _, err := s.admin.Resource(kubevirt.VirtualMachines).Namespace(stackNS).Create(t.Context(), k.sample(stackNS, name), metav1.CreateOptions{FieldManager: "demo-author"}); err != nil {
				t.Fatal(err)
			}
			uri := "/redfish/v1/Systems/" + system.Key{Namespace: stackNS, Name: name}.ID()
			testutil.Eventually(t, name+" served", 30*time.Second, 10*time.Millisecond, func(context.Context) error {
				if rec := s.do(t, http.MethodGet, uri, "", ""); rec.Code != http.StatusOK {
					return fmt.Errorf("GET %d", rec.Code)
				}
				return nil
			})
			for _, w := range append(k.setup, tt.setup...) {
				if rec := s.do(t, http.MethodPatch, uri+w.path, w.body, ""); rec.Code/100 != 2 {
					t.Fatalf("setup PATCH %s %s: %d %s", w.path, w.body, rec.Code, rec.Body)
				}
			}
			method := http.MethodPatch
			if strings.Contains(tt.path, "/Actions/") {
				method = http.MethodPost
			}
			rec := s.do(t, method, uri+tt.path, tt.body, "")
			got, why := readRefusal(t, rec.Code, rec.Body.Bytes())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("refusal (-want +got):\n%s\nbody %s", diff, rec.Body)
			}
			if !strings.Contains(why, tt.why) {
				t.Errorf("Resolution %q does not say %q", why, tt.why)
			}
			if strings.Contains(rec.Body.String(), "s3cret") {
				t.Errorf("the answer holds the URL's password: %s", rec.Body)
			}
		})
	}
}
