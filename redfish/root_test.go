package redfish

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServiceRootIsPublic(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/redfish", "/redfish/", "/redfish/v1", "/redfish/v1/", "/redfish/v1/odata"} {
		t.Run(path, func(t *testing.T) {
			rec := e.do(t, req{path: path})
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s without credentials: %d %s", path, rec.Code, rec.Body)
			}
		})
	}
	root := decode(t, e.do(t, req{path: "/redfish/v1/"}))
	got := map[string]any{}
	for _, k := range []string{"Id", "RedfishVersion", "UUID", "Vendor", "Systems", "Managers", "SessionService", "Links"} {
		got[k] = root[k]
	}
	want := map[string]any{
		"Id":             "RootService",
		"RedfishVersion": "1.17.0",
		"UUID":           "8a3d1f0e-1111-4222-8333-444455556666",
		"Vendor":         "redfish-bridge",
		"Systems":        map[string]any{"@odata.id": "/redfish/v1/Systems"},
		"Managers":       map[string]any{"@odata.id": "/redfish/v1/Managers"},
		"SessionService": map[string]any{"@odata.id": "/redfish/v1/SessionService"},
		"Links":          map[string]any{"Sessions": map[string]any{"@odata.id": "/redfish/v1/SessionService/Sessions"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("service root (-want +got):\n%s", diff)
	}
}

func TestEverythingElseNeedsAuth(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{
		"/redfish/v1/Systems", "/redfish/v1/Systems/team-a.vm1", "/redfish/v1/Managers/team-a.vm1/VirtualMedia",
		"/redfish/v1/SessionService", "/redfish/v1/SessionService/Sessions", "/redfish/v1/TaskService/Tasks/x",
		"/redfish/v1/Registries", "/redfish/v1/AccountService",
	} {
		t.Run(path, func(t *testing.T) {
			rec := e.do(t, req{path: path})
			want := errorInfo{Status: http.StatusUnauthorized, IDs: []string{"NoValidSession"}}
			if diff := cmp.Diff(want, errInfo(t, rec)); diff != "" {
				t.Errorf("GET %s without credentials (-want +got):\n%s", path, diff)
			}
			if rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestWritesNeedAuth(t *testing.T) {
	e := newEnv(t)
	for _, r := range []req{
		{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", body: `{"ResetType":"On"}`},
		{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", body: `{"Boot":{"BootSourceOverrideTarget":"Pxe"}}`},
		{method: http.MethodPost, path: "/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", body: `{"Image":"http://i/a.iso"}`},
		{method: http.MethodPost, path: "/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.EjectMedia"},
		{method: http.MethodDelete, path: "/redfish/v1/SessionService/Sessions/abc"},
		{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", body: `{"ResetType":"On"}`, token: "rb1.forged.sig"},
	} {
		if got := errInfo(t, e.do(t, r)); got.Status != http.StatusUnauthorized {
			t.Errorf("%s %s without valid credentials: %+v", r.method, r.path, got)
		}
	}
	if calls := e.fake.takeCalls(); len(calls) != 0 {
		t.Errorf("unauthenticated writes reached the backend: %v", calls)
	}
}

func TestNewRejectsConfig(t *testing.T) {
	f := newFake()
	a := newEnv(t).auth
	full := backendsOf(f, a)
	tests := []struct {
		name    string
		cfg     Config
		b       Backends
		wantErr string
	}{
		{"ok", Config{ServiceUUID: "u"}, full, ""},
		{"no uuid", Config{}, full, "ServiceUUID"},
		{"no media", Config{ServiceUUID: "u"}, Backends{Systems: f, Power: f, Boot: f, Auth: a}, "backend"},
		{"dell vendor", Config{ServiceUUID: "u", Vendor: "Dell Inc."}, full, "dell"},
		{"ami vendor", Config{ServiceUUID: "u", Vendor: "KubeAMI"}, full, "ami"},
		{"compat vendor", Config{ServiceUUID: "u", Vendor: "redfish_compatible"}, full, "redfish_compatible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg, tt.b)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("New: error %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}
