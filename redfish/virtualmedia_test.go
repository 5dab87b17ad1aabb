package redfish

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
	"github.com/redfish-bridge/redfish-bridge/system"
)

const (
	mgrMedia = "/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0"
	sysMedia = "/redfish/v1/Systems/team-a.vm1/VirtualMedia/cd0"
)

func TestInsertMedia(t *testing.T) {
	tests := []struct {
		name      string
		base      string
		body      string
		wantErr   *errorInfo
		wantCalls []string
	}{
		{
			name: "image only, via manager", base: mgrMedia, body: `{"Image":"https://img.example/boot-1.iso"}`,
			wantCalls: []string{"insert team-a.vm1 cd0 https://img.example/boot-1.iso"},
		},
		{
			name: "as sushy sends it, via system", base: sysMedia,
			body:      `{"Image":"http://img.example/a.iso","Inserted":true,"WriteProtected":true,"TransferProtocolType":"HTTP","TransferMethod":"Stream"}`,
			wantCalls: []string{"insert team-a.vm1 cd0 http://img.example/a.iso"},
		},
		{
			name: "no image", base: mgrMedia, body: `{"Inserted":true}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterMissing"}, Related: []string{"#/Image"}},
		},
		{
			name: "no body", base: mgrMedia,
			wantErr: &errorInfo{Status: 400, IDs: []string{"MalformedJSON"}},
		},
		{
			name: "not http", base: mgrMedia, body: `{"Image":"file:///etc/passwd"}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterValueFormatError"}, Related: []string{"#/Image"}},
		},
		{
			name: "relative", base: mgrMedia, body: `{"Image":"boot.iso"}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterValueFormatError"}, Related: []string{"#/Image"}},
		},
		{
			name: "writable", base: mgrMedia, body: `{"Image":"http://i/a.iso","WriteProtected":false}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/WriteProtected"}},
		},
		{
			name: "protocol mismatch", base: mgrMedia, body: `{"Image":"http://i/a.iso","TransferProtocolType":"HTTPS"}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueConflict"}, Related: []string{"#/TransferProtocolType", "#/Image"}},
		},
		{
			name: "protocol unsupported", base: mgrMedia, body: `{"Image":"http://i/a.iso","TransferProtocolType":"NFS"}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/TransferProtocolType"}},
		},
		{
			name: "as Ironic 39 sends it, https", base: sysMedia,
			body:      `{"Image":"https://img.example/a.iso","Inserted":true,"WriteProtected":true,"TransferProtocolType":"HTTPS","TransferMethod":"Stream"}`,
			wantCalls: []string{"insert team-a.vm1 cd0 https://img.example/a.iso"},
		},
		{
			name: "method upload", base: sysMedia, body: `{"Image":"http://i/a.iso","TransferProtocolType":"HTTP","TransferMethod":"Upload"}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/TransferMethod"}},
		},
		{
			name: "protocol nfs with an nfs image", base: sysMedia, body: `{"Image":"nfs://i/a.iso","TransferProtocolType":"NFS"}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterValueFormatError", "PropertyValueNotInList"}, Related: []string{"#/Image", "#/TransferProtocolType"}},
		},
		{
			name: "protocol cifs", base: sysMedia, body: `{"Image":"https://i/a.iso","TransferProtocolType":"CIFS","TransferMethod":"Stream"}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/TransferProtocolType"}},
		},
		{
			name: "credentials", base: mgrMedia, body: `{"Image":"http://i/a.iso","UserName":"u","Password":"p"}`,
			wantCalls: []string{"insert team-a.vm1 cd0 http://i/a.iso"},
		},
		{
			name: "user name without password", base: mgrMedia, body: `{"Image":"http://i/a.iso","UserName":"u"}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterMissing"}, Related: []string{"#/Password"}},
		},
		{
			name: "password without user name", base: mgrMedia, body: `{"Image":"http://i/a.iso","Password":"p"}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterMissing"}, Related: []string{"#/UserName"}},
		},
		{
			name: "password not a string", base: mgrMedia, body: `{"Image":"http://i/a.iso","UserName":"u","Password":271828}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterValueTypeError"}, Related: []string{"#/Password"}},
		},
		{
			name: "unknown slot", base: "/redfish/v1/Managers/team-a.vm1/VirtualMedia/usb0", body: `{"Image":"http://i/a.iso"}`,
			wantErr: &errorInfo{Status: 404, IDs: []string{"ResourceMissingAtURI"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			rec := e.do(t, req{method: http.MethodPost, path: tt.base + "/Actions/VirtualMedia.InsertMedia", user: "alice", body: tt.body})
			if diff := cmp.Diff(tt.wantCalls, e.fake.takeCalls()); diff != "" {
				t.Errorf("backend calls (-want +got):\n%s", diff)
			}
			if tt.wantErr != nil {
				if diff := cmp.Diff(*tt.wantErr, errInfo(t, rec)); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if rec.Code != http.StatusAccepted {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if got, want := rec.Header().Get("Location"), "/redfish/v1/TaskService/TaskMonitors/ins-1"; got != want {
				t.Errorf("Location %q, want %q", got, want)
			}
			task := decode(t, rec)
			if task["@odata.id"] != "/redfish/v1/TaskService/Tasks/ins-1" || task["TaskState"] != "Pending" {
				t.Errorf("task %v", task)
			}
		})
	}
}

// TestMediaLifecycle follows one insert through the import to an eject,
// reading the slot under both paths and the task and its monitor.
func TestMediaLifecycle(t *testing.T) {
	e := newEnv(t)
	const image = "https://img.example/ipa/boot-abc.iso"
	type view struct {
		Inserted      any
		Image         any
		ImageName     any
		TaskCode      int
		TaskState     any
		MonitorCode   int
		MonitorRetry  string
		MonitorLocate string
	}
	look := func(t *testing.T) view {
		t.Helper()
		m := e.get(t, "alice", mgrMedia)
		s := e.get(t, "alice", sysMedia)
		// Same slot behind both paths: only the URIs differ.
		norm := func(b map[string]any) string {
			b = maps.Clone(b)
			delete(b, "@odata.etag") // a digest of the body, URIs included
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			return strings.NewReplacer("/Managers/", "/X/", "/Systems/", "/X/").Replace(string(raw))
		}
		if norm(m) != norm(s) {
			t.Errorf("manager and system slot differ:\n%s", cmp.Diff(m, s))
		}
		v := view{Inserted: m["Inserted"], Image: m["Image"], ImageName: m["ImageName"]}
		task := e.do(t, req{path: "/redfish/v1/TaskService/Tasks/ins-1", user: "alice"})
		v.TaskCode = task.Code
		if task.Code == http.StatusOK {
			v.TaskState = decode(t, task)["TaskState"]
		}
		mon := e.do(t, req{path: "/redfish/v1/TaskService/TaskMonitors/ins-1", user: "alice"})
		v.MonitorCode, v.MonitorRetry, v.MonitorLocate = mon.Code, mon.Header().Get("Retry-After"), mon.Header().Get("Location")
		return v
	}
	empty := view{Inserted: false, Image: nil, ImageName: nil, TaskCode: 404, MonitorCode: 404}
	if diff := cmp.Diff(empty, look(t)); diff != "" {
		t.Fatalf("before insert (-want +got):\n%s", diff)
	}
	rec := e.do(t, req{method: http.MethodPost, path: mgrMedia + "/Actions/VirtualMedia.InsertMedia", user: "alice", body: `{"Image":"` + image + `"}`})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("insert: %d %s", rec.Code, rec.Body)
	}
	steps := []struct {
		phase system.MediaPhase
		want  view
	}{
		{system.MediaPending, view{true, image, "boot-abc.iso", 200, "Pending", 202, "5", "/redfish/v1/TaskService/TaskMonitors/ins-1"}},
		{system.MediaImporting, view{true, image, "boot-abc.iso", 200, "Running", 202, "5", "/redfish/v1/TaskService/TaskMonitors/ins-1"}},
		{system.MediaReady, view{true, image, "boot-abc.iso", 200, "Completed", 200, "", ""}},
		{system.MediaFailed, view{false, image, "boot-abc.iso", 200, "Exception", 200, "", ""}},
	}
	for _, st := range steps {
		t.Run(string(st.phase), func(t *testing.T) {
			e.fake.setPhase("team-a.vm1", "cd0", st.phase, "test")
			if diff := cmp.Diff(st.want, look(t)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, r := range []req{
		// No body and no Content-Type, as Ironic sends it.
		{method: http.MethodPost, path: sysMedia + "/Actions/VirtualMedia.EjectMedia", user: "alice"},
		{method: http.MethodPost, path: mgrMedia + "/Actions/VirtualMedia.EjectMedia/", user: "alice", body: `{}`},
	} {
		if rec := e.do(t, r); rec.Code != http.StatusNoContent {
			t.Errorf("eject %s: %d %s", r.path, rec.Code, rec.Body)
		}
	}
	if diff := cmp.Diff(empty, look(t)); diff != "" {
		t.Errorf("after eject (-want +got):\n%s", diff)
	}
	want := []string{"eject team-a.vm1 cd0", "eject team-a.vm1 cd0"}
	if diff := cmp.Diff(want, e.fake.takeCalls()[1:]); diff != "" {
		t.Errorf("eject calls (-want +got):\n%s", diff)
	}
	if got := errInfo(t, e.do(t, req{method: http.MethodPost, path: mgrMedia + "/Actions/VirtualMedia.EjectMedia", user: "alice", body: `{"Force":true}`})); got.Status != 400 {
		t.Errorf("eject with a parameter: %+v", got)
	}
}

// TestSlotShowsWhatInsertAccepts: a slot advertises the TransferMethod
// InsertMedia accepts (sushy 5.8 reads it as transfer_method), under both
// paths.
func TestSlotShowsWhatInsertAccepts(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{sysMedia, mgrMedia} {
		if got := e.get(t, "alice", path)["TransferMethod"]; got != "Stream" {
			t.Errorf("%s TransferMethod %v, want Stream", path, got)
		}
	}
}

// TestFailedSlotSaysWhy: a slot whose import failed reads, under both
// paths, as holding no CD (Inserted false, ConnectedVia NotConnected: Ironic
// 39's insert polling never takes it for mounted) and says why where a
// client reads the slot: Status Health Warning with one condition, the
// Task's OperationFailed message with the reason in its Resolution.
func TestFailedSlotSaysWhy(t *testing.T) {
	e := newEnv(t)
	const image = "https://img.example/ipa/boot-abc.iso"
	rec := e.do(t, req{method: http.MethodPost, path: mgrMedia + "/Actions/VirtualMedia.InsertMedia", user: "alice", body: `{"Image":"` + image + `"}`})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("insert: %d %s", rec.Code, rec.Body)
	}
	const reason = "import: GET " + image + ": HTTP 404"
	e.fake.setPhase("team-a.vm1", "cd0", system.MediaFailed, reason)
	for _, path := range []string{sysMedia, mgrMedia} {
		got := e.get(t, "alice", path)
		want := map[string]any{
			"Inserted": false, "ConnectedVia": "NotConnected", "Image": image,
			"Status": map[string]any{"State": "Enabled", "Health": "Warning", "Conditions": []any{map[string]any{
				"MessageId":  testutil.BaseMessagePrefix + "OperationFailed",
				"Message":    "An error occurred internal to the service as part of the overall request.  Partial results may have been returned.",
				"Severity":   "Warning",
				"Resolution": "The image import failed: " + reason + ". Insert the image again.",
				"Timestamp":  "2023-11-14T22:13:20Z", // the slot's Since: when the import failed
			}}},
		}
		view := map[string]any{}
		for k := range want {
			view[k] = got[k]
		}
		if d := cmp.Diff(want, view); d != "" {
			t.Errorf("%s (-want +got):\n%s", path, d)
		}
	}
}
