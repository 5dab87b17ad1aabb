package redfish

import (
	"net/http"
	"testing"
)

// TestMemory: each System links a Memory collection with one Memory
// resource of the VM's memory in MiB, valid against the DMTF schemas and
// confined to the caller's scope like the System.
func TestMemory(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	const sys = "/redfish/v1/Systems/team-a.vm1"
	checkServed(t, e, v, sys, "PATCH", map[string]any{"Memory": map[string]any{"@odata.id": sys + "/Memory"}})
	checkServed(t, e, v, sys+"/Memory", "", map[string]any{
		"Members":             []any{map[string]any{"@odata.id": sys + "/Memory/DIMM0"}},
		"Members@odata.count": 1.0,
	})
	checkServed(t, e, v, sys+"/Memory/DIMM0", "", map[string]any{
		"Id": "DIMM0", "CapacityMiB": 4096.0, "MemoryDeviceType": "Logical", "MemoryType": "DRAM",
		"Status": map[string]any{"State": "Enabled", "Health": "OK"},
	})
	for _, sub := range []string{"/Memory", "/Memory/DIMM0"} {
		checkScoped(t, e, "/redfish/v1/Systems/", sub)
	}
	if rec := e.do(t, req{path: sys + "/Memory/DIMM1", user: "admin"}); rec.Code != http.StatusNotFound {
		t.Errorf("GET an unknown Memory: %d", rec.Code)
	}
}
