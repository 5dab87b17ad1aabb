package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/demo"
)

// TestBadInput sends requests a careless or hostile client might send and
// checks the Redfish error answers, and that a refused insert left nothing
// behind in the cluster.
func TestBadInput(t *testing.T) {
	forEachVariant(t, func(t *testing.T, env *demo.Env) {
		a := adminFor(t, env)
		id := sysID(vmBadInput)
		media := "/redfish/v1/Managers/" + id + "/VirtualMedia/cd0"
		insert := media + "/Actions/VirtualMedia.InsertMedia"
		before := a.vm(t.Context(), t, vmBadInput)
		counters := env.Sim.Counters()

		tests := []struct {
			name, method, path, body string
			wantStatus               int
			wantMessageID            string // suffix, registry version aside
		}{
			{"ftp image", http.MethodPost, insert, `{"Image":"ftp://127.0.0.1/boot.iso"}`, http.StatusBadRequest, ""},
			{"file image", http.MethodPost, insert, `{"Image":"file:///etc/passwd"}`, http.StatusBadRequest, ""},
			{"image not a string", http.MethodPost, insert, `{"Image":42}`, http.StatusBadRequest, ""},
			{"no image", http.MethodPost, insert, `{}`, http.StatusBadRequest, "ActionParameterMissing"},
			{"malformed JSON", http.MethodPost, insert, `{"Image":`, http.StatusBadRequest, ""},
			{"unknown system", http.MethodGet, "/redfish/v1/Systems/demo.nope", "", http.StatusNotFound, "ResourceMissingAtURI"},
			{"system id without namespace", http.MethodGet, "/redfish/v1/Systems/nope", "", http.StatusNotFound, "ResourceMissingAtURI"},
			{"reset unknown system", http.MethodPost, "/redfish/v1/Systems/demo.nope/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`, http.StatusNotFound, "ResourceMissingAtURI"},
			{"insert into unknown system", http.MethodPost, "/redfish/v1/Managers/demo.nope/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", `{"Image":"` + imageURL(env, "boot.iso") + `"}`, http.StatusNotFound, "ResourceMissingAtURI"},
			{"unknown slot", http.MethodGet, "/redfish/v1/Managers/" + id + "/VirtualMedia/cd9", "", http.StatusNotFound, "ResourceMissingAtURI"},
			{"bad reset type", http.MethodPost, "/redfish/v1/Systems/" + id + "/Actions/ComputerSystem.Reset", `{"ResetType":"Explode"}`, http.StatusBadRequest, ""},
			// null is no value of a writable property: refused, not read as false or "".
			{"secure boot null", http.MethodPatch, "/redfish/v1/Systems/" + id + "/SecureBoot", `{"SecureBootEnable":null}`, http.StatusBadRequest, "PropertyValueTypeError"},
			{"boot mode null", http.MethodPatch, "/redfish/v1/Systems/" + id, `{"Boot":{"BootSourceOverrideMode":null}}`, http.StatusBadRequest, "PropertyValueTypeError"},
			{"bios attribute null", http.MethodPatch, "/redfish/v1/Systems/" + id + "/Bios/Settings", `{"Attributes":{"SecureBoot":null}}`, http.StatusBadRequest, "PropertyValueTypeError"},
			{"reset type null", http.MethodPost, "/redfish/v1/Systems/" + id + "/Actions/ComputerSystem.Reset", `{"ResetType":null}`, http.StatusBadRequest, "ActionParameterValueTypeError"},
			{"nmi", http.MethodPost, "/redfish/v1/Systems/" + id + "/Actions/ComputerSystem.Reset", `{"ResetType":"Nmi"}`, http.StatusBadRequest, "PropertyValueNotInList"},
		}
		client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the demo's self-signed certificate
		}}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, body := call(t, client, env, tc.method, tc.path, tc.body)
				if status != tc.wantStatus {
					t.Errorf("%s %s: status %d, want %d; body %s", tc.method, tc.path, status, tc.wantStatus, body)
				}
				var e struct {
					Error struct {
						Code     string `json:"code"`
						Message  string `json:"message"`
						Extended []struct {
							MessageID string `json:"MessageId"`
							Message   string `json:"Message"`
						} `json:"@Message.ExtendedInfo"`
					} `json:"error"`
				}
				if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" || len(e.Error.Extended) == 0 {
					t.Fatalf("not a Redfish error body (%v): %s", err, body)
				}
				if m := e.Error.Extended[0]; !strings.HasPrefix(m.MessageID, "Base.") || m.Message == "" {
					t.Errorf("ExtendedInfo %+v: want a Base registry message", m)
				}
				if tc.wantMessageID != "" && !strings.HasSuffix(e.Error.Extended[0].MessageID, "."+tc.wantMessageID) {
					t.Errorf("MessageId %s, want Base.*.%s", e.Error.Extended[0].MessageID, tc.wantMessageID)
				}
			})
		}

		after := a.vm(t.Context(), t, vmBadInput)
		if diff := cmp.Diff(before.GetAnnotations(), after.GetAnnotations()); diff != "" {
			t.Errorf("VM annotations changed by refused requests (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(templateSpec(t, before), templateSpec(t, after)); diff != "" {
			t.Errorf("VM template changed by refused requests (-before +after):\n%s", diff)
		}
		if before.GetGeneration() != after.GetGeneration() {
			t.Errorf("VM generation %d -> %d", before.GetGeneration(), after.GetGeneration())
		}
		if left := a.mediaObjects(t.Context(), t, vmBadInput); len(left) != 0 {
			t.Errorf("refused inserts left %v", left)
		}
		if vmi := a.vmi(t.Context(), t, vmBadInput); vmi != nil {
			t.Errorf("a VMI %s exists after refused requests", vmi.GetName())
		}
		if got := env.Sim.Counters(); got.ImportsStarted != counters.ImportsStarted {
			t.Errorf("imports started %d -> %d", counters.ImportsStarted, got.ImportsStarted)
		}
	})
}

// call sends one request with Basic auth and returns the status and body.
func call(t *testing.T, client *http.Client, env *demo.Env, method, path, body string) (int, []byte) {
	t.Helper()
	status, _, raw := exchange(t, client, env.URL, method, path, body, func(r *http.Request) { r.SetBasicAuth(env.User, env.Password) })
	return status, raw
}

// exchange sends one request (prepare sets its credentials and headers; a
// body is sent as JSON) and returns the status, headers and body.
func exchange(t *testing.T, client *http.Client, base, method, path, body string, prepare func(*http.Request)) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	prepare(req)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, buf.Bytes()
}
