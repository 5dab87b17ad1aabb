package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/media"
)

// TestBannerBootModes: the banner says what a boot mode change does to
// vm-0, whose author owns firmware.bootloader.efi: a client's Legacy
// removes that efi (apply.TestLegacyReleasesAuthorEFI proves it on a real
// apiserver), so the banner offers Legacy for vm-0 and never says it stays
// UEFI.
func TestBannerBootModes(t *testing.T) {
	for _, firmwareVM := range []bool{false, true} {
		var out bytes.Buffer
		writeBanner(&out, banner{URL: "https://127.0.0.1:8443", User: "admin", Password: "pw", Kubeconfig: "/k", ImagesURL: "http://i", Addr: "127.0.0.1:8443", FirmwareVM: firmwareVM})
		text := out.String()
		legacyVM0 := `-d '{"Boot":{"BootSourceOverrideMode":"Legacy"}}' https://127.0.0.1:8443/redfish/v1/Systems/demo.vm-0`
		for _, want := range []string{legacyVM0, "removes the author's firmware.bootloader.efi"} {
			if !strings.Contains(text, want) {
				t.Errorf("firmware VM %v: banner lacks %q:\n%s", firmwareVM, want, text)
			}
		}
		if strings.Contains(text, "stays UEFI") {
			t.Errorf("firmware VM %v: banner says a VM stays UEFI, which a client's Legacy undoes:\n%s", firmwareVM, text)
		}
		if got := strings.Contains(text, "Systems/demo.vm-fw-0"); got != firmwareVM {
			t.Errorf("banner names vm-fw-0: %v, want %v", got, firmwareVM)
		}
	}
}

// TestBannerWebPages: the banner names the web pages' URL (package webui).
func TestBannerWebPages(t *testing.T) {
	var out bytes.Buffer
	writeBanner(&out, banner{URL: "https://127.0.0.1:8443", User: "admin", Password: "pw"})
	if want := "https://127.0.0.1:8443/ui/"; !strings.Contains(out.String(), want) {
		t.Errorf("banner lacks %q:\n%s", want, out.String())
	}
}

// TestBannerImportMethod: the banner says which import method is active,
// CDI's own controller with -cdi, else the bridge's import pods.
func TestBannerImportMethod(t *testing.T) {
	for method, want := range map[string]string{
		media.ImportMethodCDI: "import method     cdi: a CDI DataVolume per insert, reconciled by CDI v1.66.0's own cdi-controller",
		media.ImportMethodPod: "import method     pod: the bridge's import pod per insert",
	} {
		var out bytes.Buffer
		writeBanner(&out, banner{URL: "https://127.0.0.1:8443", User: "admin", Password: "pw", ImportMethod: method})
		if !strings.Contains(out.String(), want) {
			t.Errorf("banner with method %s lacks %q:\n%s", method, want, out.String())
		}
	}
}
