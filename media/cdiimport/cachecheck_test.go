package cdiimport

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/redfish-bridge/redfish-bridge/media/download"
	"github.com/redfish-bridge/redfish-bridge/media/importer"
	"github.com/redfish-bridge/redfish-bridge/system"
)

// TestCDIEntryName: a CDI cache entry is named by the key and the
// version the check saw: a changed image is another entry, the same
// version the same one.
func TestCDIEntryName(t *testing.T) {
	key := "0123456789abcdef0123456789abcdef" // a cache key: 32 hex characters
	v1 := download.Validators{ETag: `"1"`, Length: 10}
	v2 := download.Validators{ETag: `"2"`, Length: 10}
	a, b := cdiEntryName(key, v1), cdiEntryName(key, v2)
	if a == b || a != cdiEntryName(key, v1) || len(a) > 63 {
		t.Errorf("entries %q (v1) and %q (v2): want distinct, stable, at most 63 characters", a, b)
	}
	slot := system.MediaSlot{Slot: "cd0", Image: "https://images.example/a.iso", CacheKey: key}
	dv := entryDataVolume(importer.Owner{Key: system.Key{Namespace: "ns", Name: "vm"}}, slot, a, v1, "", resource.MustParse("1Gi"), "")
	if !isCDIEntry(dv, key, v1) || isCDIEntry(dv, key, v2) || isCDIEntry(dv, "other", v1) {
		t.Errorf("isCDIEntry does not tell the entry of %s/v1 from others", key)
	}
}
