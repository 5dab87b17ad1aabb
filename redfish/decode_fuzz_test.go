package redfish

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// fuzzTargets are the request decoders: every route that reads a body.
var fuzzTargets = []struct{ method, path string }{
	{http.MethodPatch, "/redfish/v1/Systems/team-a.vm1"},
	{http.MethodPost, "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset"},
	{http.MethodPost, "/redfish/v1/Systems/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia"},
	{http.MethodPost, "/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia"},
	{http.MethodPost, "/redfish/v1/Systems/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.EjectMedia"},
	{http.MethodPatch, "/redfish/v1/Systems/team-a.vm1/Bios/Settings"},
	{http.MethodPatch, "/redfish/v1/Systems/team-a.vm1/SecureBoot"},
	{http.MethodPost, "/redfish/v1/SessionService/Sessions"},
}

var fuzzCTypes = []string{"application/json", "application/json; charset=utf-8", "", "text/plain", "application/json; x=\"", "multipart/form-data"}

// FuzzRequestBodies drives every body decoder through the echo handler
// with the fake backend. For any body, content type and If-Match: no
// panic, no 5xx, and every non-2xx answer is a Redfish error document.
func FuzzRequestBodies(f *testing.F) {
	seeds := []string{
		`{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}`,
		`{"Boot":{"BootSourceOverrideTarget":"Pxe","BootSourceOverrideEnabled":"Continuous","BootSourceOverrideMode":"UEFI"}}`,
		`{"Boot":{"BootSourceOverrideTarget":"Hdd"}}`, `{"Boot":{"BootSourceOverrideEnabled":"Disabled"}}`,
		`{"Boot":null}`, `{"Boot":"Cd"}`, `{"Boot":{"BootSourceOverrideTarget":7}}`, `{"AssetTag":"x"}`,
		`{"ResetType":"On"}`, `{"ResetType":"ForceOff"}`, `{"ResetType":"ForceRestart"}`, `{"ResetType":"GracefulShutdown"}`,
		`{"ResetType":"Nmi"}`, `{"ResetType":""}`, `{"ResetType":null}`, `{"ResetType":["On"]}`,
		`{"Image":"http://127.0.0.1:8080/boot.iso"}`,
		`{"Image":"https://images.example.com/ipa.iso","Inserted":true,"WriteProtected":true,"TransferProtocolType":"HTTPS","TransferMethod":"Stream"}`,
		`{"Image":"http://x/a.iso","TransferProtocolType":"HTTPS"}`, `{"Image":"ftp://x/a.iso"}`, `{"Image":"file:///etc/passwd"}`,
		`{"Image":"http://u:p@x/a.iso"}`, `{"Image":"http://169.254.169.254/latest"}`, `{"Image":"http://x/a.iso","Inserted":false}`,
		`{"Image":""}`, `{"Image":12}`, `{}`, ``, `null`, `[]`, `"x"`, `{`, `{"a":1}{"b":2}`, `{"Image":"\u0000"}`,
		`{"Attributes":{"BootMode":"Uefi"}}`, `{"SecureBootEnable":true}`, `{"SecureBootEnable":"yes"}`,
		`{"UserName":"admin","Password":"admin-pw"}`, `{"UserName":"admin","Password":"wrong"}`, `{"UserName":1}`,
		`{"@odata.etag":"W/\"1\"","Boot":{}}`, strings.Repeat(`[`, 10000), `{"x":"` + strings.Repeat("y", 1<<17) + `"}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s, uint8(0), "")
		f.Add(uint8(i+1), s, uint8(i), `W/"1"`)
	}
	// One env for all inputs (auth.New pays a full-cost bcrypt); a fuzz
	// process runs its inputs one at a time, so it needs no lock.
	var e *env
	f.Fuzz(func(t *testing.T, target uint8, body string, ctype uint8, ifMatch string) {
		if e == nil {
			e = newEnv(t)
		}
		tg := fuzzTargets[int(target)%len(fuzzTargets)]
		r := req{method: tg.method, path: tg.path, body: body, user: "admin", ctype: fuzzCTypes[int(ctype)%len(fuzzCTypes)]}
		if r.ctype == "" && body != "" {
			r.header = map[string]string{"Content-Type": ""}
		}
		if strings.ContainsAny(ifMatch, "\r\n\x00") {
			ifMatch = ""
		}
		if ifMatch != "" {
			if r.header == nil {
				r.header = map[string]string{}
			}
			r.header["If-Match"] = ifMatch
		}
		rec := e.do(t, r)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", tg.method, tg.path, body, rec.Code, rec.Body)
		}
		if rec.Code < 300 {
			return
		}
		checkErrorDocument(t, rec.Code, rec.Body.Bytes())
	})
}

// checkErrorDocument fails unless b is a Redfish error: error.code and
// error.message set, and at least one extended message with a MessageId.
func checkErrorDocument(t *testing.T, status int, b []byte) {
	t.Helper()
	var doc struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Infos   []struct {
				MessageID string `json:"MessageId"`
				Message   string `json:"Message"`
			} `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Error == nil {
		t.Fatalf("status %d: not a Redfish error document: %q (%v)", status, b, err)
	}
	if doc.Error.Code == "" || doc.Error.Message == "" || len(doc.Error.Infos) == 0 {
		t.Fatalf("status %d: incomplete Redfish error %q", status, b)
	}
	for _, m := range doc.Error.Infos {
		if m.MessageID == "" || m.Message == "" {
			t.Fatalf("status %d: extended info without MessageId or Message: %q", status, b)
		}
	}
}
