package cdiimport

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestCDIGetsNoCredentials: CDI's importer sends a DataVolume's secretRef
// credentials on every redirect, to any host, so the CDI method refuses an
// insert with credentials (the pod imports it: TestMediaCDI's
// CredentialsUseThePod) and a DataVolume never names the import Secret.
func TestCDIGetsNoCredentials(t *testing.T) {
	c := &cdiImporter{}
	slot := system.MediaSlot{Slot: "cd0", Image: "https://images.example/a.iso", InsertID: "0123456789abcdef",
		ClaimName: "vm-media-cd0", ImportSecret: "vm-media-cd0-0123456789abcdef", Credentials: true, CABundle: true}
	if why := c.Refuses(slot); why == "" {
		t.Error("the CDI method accepts an insert with credentials")
	}
	if why := c.Refuses(system.MediaSlot{CABundle: true, ImportSecret: "x"}); why != "" {
		t.Errorf("the CDI method refuses an insert with a CA bundle only: %s", why)
	}
	dv, err := unstructuredDataVolume(dataVolumeFor(importer.Owner{Key: system.Key{Namespace: "ns", Name: "vm"}}, slot, resource.MustParse("1Gi"), ""))
	if err != nil {
		t.Fatal(err)
	}
	src, _, _ := unstructured.NestedStringMap(dv.Object, "spec", "source", "http")
	if _, ok := src["secretRef"]; ok || src["certConfigMap"] != slot.ImportSecret {
		t.Errorf("DataVolume http source %v: want a certConfigMap and no secretRef", src)
	}
}
