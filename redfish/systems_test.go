package redfish

import (
	"github.com/redfish-bridge/redfish-bridge/system"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func members(t *testing.T, body map[string]any) []string {
	t.Helper()
	var out []string
	for _, m := range body["Members"].([]any) {
		out = append(out, m.(map[string]any)["@odata.id"].(string))
	}
	if n := int(body["Members@odata.count"].(float64)); n != len(out) {
		t.Errorf("Members@odata.count %d, %d members", n, len(out))
	}
	return out
}

func TestTenancy(t *testing.T) {
	e := newEnv(t)
	// The same inserted media on every system, so tasks exist everywhere.
	for _, id := range []string{"team-a.vm1", "team-a.vm2", "team-b.vm3"} {
		rec := e.do(t, req{method: http.MethodPost, user: "admin", path: "/redfish/v1/Systems/" + id + "/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia",
			body: `{"Image":"http://img.example/` + id + `.iso"}`})
		if rec.Code != http.StatusAccepted {
			t.Fatalf("insert into %s: %d %s", id, rec.Code, rec.Body)
		}
	}
	e.fake.takeCalls()
	tasks := map[string]string{"team-a.vm1": "ins-1", "team-a.vm2": "ins-2", "team-b.vm3": "ins-3"}
	visible := map[string][]string{
		"admin": {"team-a.vm1", "team-a.vm2", "team-b.vm3"},
		"alice": {"team-a.vm1", "team-a.vm2"},
		"bob":   {"team-b.vm3"},
		"carol": {"team-a.vm1"}, // team-a, label tier=gold only
	}
	for user, want := range visible {
		t.Run(user, func(t *testing.T) {
			for _, coll := range []string{"Systems", "Managers", "Chassis"} {
				var wantURIs []string
				for _, id := range want {
					wantURIs = append(wantURIs, "/redfish/v1/"+coll+"/"+id)
				}
				got := members(t, e.get(t, user, "/redfish/v1/"+coll))
				if diff := cmp.Diff(wantURIs, got); diff != "" {
					t.Errorf("%s collection (-want +got):\n%s", coll, diff)
				}
			}
			var wantTasks []string
			for _, id := range want {
				wantTasks = append(wantTasks, "/redfish/v1/TaskService/Tasks/"+tasks[id])
			}
			if diff := cmp.Diff(wantTasks, members(t, e.get(t, user, "/redfish/v1/TaskService/Tasks"))); diff != "" {
				t.Errorf("tasks (-want +got):\n%s", diff)
			}
			for _, id := range []string{"team-a.vm1", "team-a.vm2", "team-b.vm3"} {
				wantCode := http.StatusNotFound
				if slices.Contains(want, id) {
					wantCode = http.StatusOK
				}
				for _, path := range []string{
					"/redfish/v1/Systems/" + id,
					"/redfish/v1/Systems/" + id + "/Bios",
					"/redfish/v1/Systems/" + id + "/EthernetInterfaces/default",
					"/redfish/v1/Managers/" + id,
					"/redfish/v1/Managers/" + id + "/VirtualMedia/cd0",
					"/redfish/v1/Systems/" + id + "/VirtualMedia/cd0",
					"/redfish/v1/Chassis/" + id,
					"/redfish/v1/TaskService/Tasks/" + tasks[id],
					"/redfish/v1/TaskService/TaskMonitors/" + tasks[id],
				} {
					rec := e.do(t, req{path: path, user: user})
					if rec.Code != wantCode && (wantCode != http.StatusOK || rec.Code != http.StatusAccepted) {
						t.Errorf("GET %s: %d, want %d", path, rec.Code, wantCode)
					}
				}
				// Writes to an invisible system are 404 too, and never reach the backend.
				for _, r := range []req{
					{method: http.MethodPatch, path: "/redfish/v1/Systems/" + id, body: `{"Boot":{"BootSourceOverrideTarget":"Pxe"}}`},
					{method: http.MethodPost, path: "/redfish/v1/Systems/" + id + "/Actions/ComputerSystem.Reset", body: `{"ResetType":"On"}`},
					{method: http.MethodPost, path: "/redfish/v1/Managers/" + id + "/VirtualMedia/cd0/Actions/VirtualMedia.EjectMedia"},
				} {
					if wantCode != http.StatusNotFound {
						continue
					}
					r.user = user
					if got := errInfo(t, e.do(t, r)); got.Status != http.StatusNotFound || got.IDs[0] != "ResourceMissingAtURI" {
						t.Errorf("%s %s: %+v, want 404 ResourceMissingAtURI", r.method, r.path, got)
					}
				}
			}
			if calls := e.fake.takeCalls(); len(calls) != 0 {
				t.Errorf("backend writes for invisible systems: %v", calls)
			}
		})
	}
}

func TestGetSystem(t *testing.T) {
	e := newEnv(t)
	rec := e.do(t, req{path: "/redfish/v1/Systems/team-a.vm1", user: "alice"})
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	body := decode(t, rec)
	if got, want := rec.Header().Get("ETag"), body["@odata.etag"]; got != want || !etagRE.MatchString(got) {
		t.Errorf("ETag header %q, body %q: want equal weak digests", got, want)
	}
	got := map[string]any{
		"Id": body["Id"], "UUID": body["UUID"], "PowerState": body["PowerState"],
		"Memory":  body["MemorySummary"].(map[string]any)["TotalSystemMemoryGiB"],
		"Threads": body["ProcessorSummary"].(map[string]any)["LogicalProcessorCount"],
		"Boot":    body["Boot"],
		"Links":   body["Links"],
	}
	want := map[string]any{
		"Id": "team-a.vm1", "UUID": "5f1c7d3e-0000-4000-8000-000000000001", "PowerState": "Off",
		"Memory": 4.0, "Threads": 4.0,
		"Boot": map[string]any{
			"BootSourceOverrideTarget":                          "None",
			"BootSourceOverrideTarget@Redfish.AllowableValues":  []any{"None", "Pxe", "Hdd", "Cd", "UefiHttp"},
			"BootSourceOverrideEnabled":                         "Disabled",
			"BootSourceOverrideEnabled@Redfish.AllowableValues": []any{"Disabled", "Once", "Continuous"},
			"BootSourceOverrideMode":                            "UEFI",
			"BootSourceOverrideMode@Redfish.AllowableValues":    []any{"UEFI", "Legacy"},
			"HttpBootUri": nil,
			"BootOrder":   []any{},
			"BootOptions": map[string]any{"@odata.id": "/redfish/v1/Systems/team-a.vm1/BootOptions"},
			"@Redfish.WriteableProperties": []any{
				"BootSourceOverrideTarget", "BootSourceOverrideEnabled", "BootSourceOverrideMode", "HttpBootUri",
			},
		},
		"Links": map[string]any{
			"ManagedBy": []any{map[string]any{"@odata.id": "/redfish/v1/Managers/team-a.vm1"}},
			"Chassis":   []any{map[string]any{"@odata.id": "/redfish/v1/Chassis/team-a.vm1"}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("system (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"nodot", "Team-A.vm1", "team-a.", "team-a.vm1.x", "a..b", "team-a.VM1", "team-a.vm9"} {
		if got := e.do(t, req{path: "/redfish/v1/Systems/" + bad, user: "admin"}).Code; got != http.StatusNotFound {
			t.Errorf("GET Systems/%s: %d, want 404", bad, got)
		}
	}
}

func TestPatchBoot(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		ifMatch   string
		wantCode  int
		wantCalls []string
		wantErr   *errorInfo
		wantBoot  []string // target, enabled, mode read back
	}{
		{
			name: "target only keeps the rest", body: `{"Boot":{"BootSourceOverrideTarget":"Cd"}}`,
			wantCode: 204, wantCalls: []string{"boot team-a.vm1 Cd - -"}, wantBoot: []string{"Cd", "Disabled", "UEFI"},
		},
		{
			name: "mode alone reads back at once", body: `{"Boot":{"BootSourceOverrideMode":"Legacy"}}`,
			wantCode: 204, wantCalls: []string{"boot team-a.vm1 - - Legacy"}, wantBoot: []string{"None", "Disabled", "Legacy"},
		},
		{
			name: "all three", body: `{"Boot":{"BootSourceOverrideTarget":"Pxe","BootSourceOverrideEnabled":"Once","BootSourceOverrideMode":"UEFI"}}`,
			wantCode: 204, wantCalls: []string{"boot team-a.vm1 Pxe Once UEFI"}, wantBoot: []string{"Pxe", "Once", "UEFI"},
		},
		{
			name: "weak etag", body: `{"Boot":{"BootSourceOverrideEnabled":"Continuous"}}`, ifMatch: "{weak}",
			wantCode: 204, wantCalls: []string{"boot team-a.vm1 - Continuous -"}, wantBoot: []string{"None", "Continuous", "UEFI"},
		},
		{
			name: "strong form of the etag", body: `{"Boot":{"BootSourceOverrideEnabled":"Once"}}`, ifMatch: "{strong}",
			wantCode: 204, wantCalls: []string{"boot team-a.vm1 - Once -"}, wantBoot: []string{"None", "Once", "UEFI"},
		},
		{
			name: "star", body: `{"Boot":{"BootSourceOverrideEnabled":"Once"}}`, ifMatch: `*`,
			wantCode: 204, wantCalls: []string{"boot team-a.vm1 - Once -"}, wantBoot: []string{"None", "Once", "UEFI"},
		},
		{
			name: "stale etag", body: `{"Boot":{"BootSourceOverrideTarget":"Cd"}}`, ifMatch: `W/"0"`,
			wantErr: &errorInfo{Status: 412, IDs: []string{"PreconditionFailed"}}, wantBoot: []string{"None", "Disabled", "UEFI"},
		},
		{
			name: "bad values, all reported", body: `{"Boot":{"BootSourceOverrideTarget":"Floppy","BootSourceOverrideMode":"Uefi"}}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList", "PropertyValueNotInList"},
				Related: []string{"#/Boot/BootSourceOverrideTarget", "#/Boot/BootSourceOverrideMode"}},
			wantBoot: []string{"None", "Disabled", "UEFI"},
		},
		{
			name: "wrong type", body: `{"Boot":{"BootSourceOverrideEnabled":true}}`,
			wantErr:  &errorInfo{Status: 400, IDs: []string{"PropertyValueTypeError"}, Related: []string{"#/Boot/BootSourceOverrideEnabled"}},
			wantBoot: []string{"None", "Disabled", "UEFI"},
		},
		{
			name: "unknown and read-only properties", body: `{"Boot":{"BootSourceOverrideTarget":"Cd","UefiTargetBootSourceOverride":"x"},"PowerState":"On","Bogus":1}`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyUnknown", "PropertyUnknown", "PropertyNotWritable"},
				Related: []string{"#/Boot/UefiTargetBootSourceOverride", "#/Bogus", "#/PowerState"}},
			wantBoot: []string{"None", "Disabled", "UEFI"},
		},
		{
			name: "malformed", body: `{"Boot":`,
			wantErr: &errorInfo{Status: 400, IDs: []string{"MalformedJSON"}}, wantBoot: []string{"None", "Disabled", "UEFI"},
		},
		{
			name: "empty boot is a no-op", body: `{"Boot":{}}`,
			wantCode: 204, wantBoot: []string{"None", "Disabled", "UEFI"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			r := req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", user: "alice", body: tt.body}
			if tt.ifMatch != "" {
				r.header = map[string]string{"If-Match": currentETag(t, e, "alice", r.path, tt.ifMatch)}
			}
			rec := e.do(t, r)
			if tt.wantErr != nil {
				if diff := cmp.Diff(*tt.wantErr, errInfo(t, rec)); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			} else if rec.Code != tt.wantCode {
				t.Errorf("status %d, want %d: %s", rec.Code, tt.wantCode, rec.Body)
			}
			if diff := cmp.Diff(tt.wantCalls, e.fake.takeCalls()); diff != "" {
				t.Errorf("backend calls (-want +got):\n%s", diff)
			}
			boot := e.get(t, "alice", "/redfish/v1/Systems/team-a.vm1")["Boot"].(map[string]any)
			got := []string{boot["BootSourceOverrideTarget"].(string), boot["BootSourceOverrideEnabled"].(string), boot["BootSourceOverrideMode"].(string)}
			if diff := cmp.Diff(tt.wantBoot, got); diff != "" {
				t.Errorf("boot read back (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReset(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantCode  int
		wantErr   *errorInfo
		wantCalls []string
	}{
		{name: "on", body: `{"ResetType":"On"}`, wantCode: 204, wantCalls: []string{"reset team-a.vm1 On"}},
		{name: "force off", body: `{"ResetType":"ForceOff"}`, wantCode: 204, wantCalls: []string{"reset team-a.vm1 ForceOff"}},
		{name: "missing", body: `{}`, wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterMissing"}, Related: []string{"#/ResetType"}}},
		{name: "no body", body: ``, wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterMissing"}, Related: []string{"#/ResetType"}}},
		{name: "not in list", body: `{"ResetType":"Explode"}`, wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/ResetType"}}},
		{name: "wrong type", body: `{"ResetType":1}`, wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterValueTypeError"}, Related: []string{"#/ResetType"}}},
		{name: "extra parameter", body: `{"ResetType":"On","Delay":3}`, wantErr: &errorInfo{Status: 400, IDs: []string{"ActionParameterNotSupported"}, Related: []string{"#/Delay"}}},
		// KubeVirt cannot inject an NMI: not advertised, refused like any value outside the list.
		{name: "nmi", body: `{"ResetType":"Nmi"}`, wantErr: &errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/ResetType"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			rec := e.do(t, req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset/", user: "alice", body: tt.body})
			if tt.wantErr != nil {
				if diff := cmp.Diff(*tt.wantErr, errInfo(t, rec)); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			} else if rec.Code != tt.wantCode {
				t.Errorf("status %d, want %d: %s", rec.Code, tt.wantCode, rec.Body)
			}
			if diff := cmp.Diff(tt.wantCalls, e.fake.takeCalls()); diff != "" {
				t.Errorf("backend calls (-want +got):\n%s", diff)
			}
		})
	}
}

// etagRE is the form of the service's ETags: weak, a 16-digit hex digest.
var etagRE = regexp.MustCompile(`^W/"[0-9a-f]{16}"$`)

// currentETag resolves the placeholders "{weak}" and "{strong}" in ifMatch
// to the ETag a GET of path returns now (weak as served, or its strong
// form); any other value is returned as it is.
func currentETag(t *testing.T, e *env, user, path, ifMatch string) string {
	t.Helper()
	if ifMatch != "{weak}" && ifMatch != "{strong}" {
		return ifMatch
	}
	rec := e.do(t, req{path: path, user: user})
	tag := rec.Header().Get("ETag")
	if !etagRE.MatchString(tag) {
		t.Fatalf("GET %s: ETag %q", path, tag)
	}
	e.fake.takeCalls()
	if ifMatch == "{strong}" {
		return strings.TrimPrefix(tag, "W/")
	}
	return tag
}

// TestSystemETagFollowsItsBody: a media import finishing changes the VM
// (and its VirtualMedia resource) but not the ComputerSystem body, so the
// System's ETag must stay (gofish PATCHes with the ETag of the system it
// read before inserting media); a boot change must move it.
func TestSystemETagFollowsItsBody(t *testing.T) {
	e := newEnv(t)
	const sysURI, mediaURI = "/redfish/v1/Systems/team-a.vm1", "/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0"
	tags := func() (sys, media string) {
		t.Helper()
		return e.do(t, req{path: sysURI, user: "alice"}).Header().Get("ETag"),
			e.do(t, req{path: mediaURI, user: "alice"}).Header().Get("ETag")
	}
	sys0, media0 := tags()
	e.fake.mu.Lock()
	v := e.fake.systems["team-a.vm1"]
	v.Slots = []system.MediaSlot{{Slot: "cd0", Image: "http://img/boot.iso", Phase: system.MediaReady, InsertID: "i1"}}
	e.fake.bump(v)
	e.fake.mu.Unlock()
	sys1, media1 := tags()
	if sys1 != sys0 {
		t.Errorf("System ETag moved with a media change: %s -> %s", sys0, sys1)
	}
	if media1 == media0 {
		t.Errorf("VirtualMedia ETag %s did not move when the image was inserted", media1)
	}
	e.fake.mu.Lock()
	v.Boot.Target, v.Boot.Enabled = system.BootCd, system.BootOnce
	e.fake.bump(v)
	e.fake.mu.Unlock()
	if sys2, _ := tags(); sys2 == sys1 {
		t.Errorf("System ETag %s did not move with a boot override change", sys2)
	}
}
