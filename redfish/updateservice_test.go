package redfish

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUpdateService: the service root links an UpdateService whose
// FirmwareInventory holds the bridge (its version), readable by every
// user alike, and SimpleUpdate, named in Actions, is refused: a POST to it
// is 400 ActionNotSupported naming the action and saying why, nothing
// done.
func TestUpdateService(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	const fw = "/redfish/v1/UpdateService/FirmwareInventory"
	root := decode(t, e.do(t, req{path: "/redfish/v1"}))
	if diff := cmp.Diff(map[string]any{"@odata.id": "/redfish/v1/UpdateService"}, root["UpdateService"]); diff != "" {
		t.Errorf("ServiceRoot.UpdateService (-want +got):\n%s", diff)
	}
	svc := checkServed(t, e, v, "/redfish/v1/UpdateService", "", map[string]any{
		"ServiceEnabled": false, "FirmwareInventory": map[string]any{"@odata.id": fw},
	})
	wantActions := map[string]any{"#UpdateService.SimpleUpdate": map[string]any{"target": "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"}}
	if diff := cmp.Diff(wantActions, svc["Actions"]); diff != "" {
		t.Errorf("UpdateService Actions (-want +got):\n%s", diff)
	}
	checkServed(t, e, v, fw, "", map[string]any{
		"Members": []any{map[string]any{"@odata.id": fw + "/redfish-bridge"}}, "Members@odata.count": 1.0,
	})
	entry := checkServed(t, e, v, fw+"/redfish-bridge", "", map[string]any{"Version": "1.0.0", "Updateable": false})
	mgr := e.get(t, "admin", "/redfish/v1/Managers/team-a.vm1")
	if diff := cmp.Diff(map[string]any{"@odata.id": entry["@odata.id"]}, mgr["Links"].(map[string]any)["ActiveSoftwareImage"]); diff != "" {
		t.Errorf("Manager Links.ActiveSoftwareImage (-want +got):\n%s", diff)
	}
	// No system in it: a scoped user reads the same inventory.
	if diff := cmp.Diff(entry, e.get(t, "carol", fw+"/redfish-bridge")); diff != "" {
		t.Errorf("carol's view differs (-admin +carol):\n%s", diff)
	}
	if rec := e.do(t, req{path: fw + "/bios", user: "admin"}); rec.Code != http.StatusNotFound {
		t.Errorf("GET an unknown firmware: %d", rec.Code)
	}

	const action = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
	rec := e.do(t, req{method: http.MethodPost, path: action, user: "admin", body: `{"ImageURI":"http://images.example/fw.bin"}`})
	if diff := cmp.Diff(errorInfo{Status: http.StatusBadRequest, IDs: []string{"ActionNotSupported"}}, errInfo(t, rec)); diff != "" {
		t.Errorf("SimpleUpdate (-want +got):\n%s", diff)
	}
	info := decode(t, rec)["error"].(map[string]any)["@Message.ExtendedInfo"].([]any)[0].(map[string]any)
	if diff := cmp.Diff([]any{"UpdateService.SimpleUpdate"}, info["MessageArgs"]); diff != "" {
		t.Errorf("SimpleUpdate MessageArgs (-want +got):\n%s", diff)
	}
	if res, _ := info["Resolution"].(string); res == "" || res == baseResolution(t, "ActionNotSupported") {
		t.Errorf("SimpleUpdate Resolution %q does not say why", res)
	}
	v.validate(t, "SimpleUpdate refusal", decode(t, rec))
	if got := errInfo(t, e.do(t, req{method: http.MethodPost, path: action, body: `{}`})); got.Status != http.StatusUnauthorized {
		t.Errorf("SimpleUpdate without credentials: %+v", got)
	}
	if calls := e.fake.takeCalls(); len(calls) != 0 {
		t.Errorf("SimpleUpdate reached the backend: %v", calls)
	}
}

// baseResolution is the Base registry's own Resolution of id.
func baseResolution(t *testing.T, id string) string {
	t.Helper()
	r, _ := msg(id, nil, "x").render()["Resolution"].(string)
	return r
}
