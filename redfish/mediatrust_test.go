package redfish

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testca"
	"github.com/redfish-bridge/redfish-bridge/system"
)

func TestMediaCertificates(t *testing.T) {
	for _, base := range []string{mgrMedia, sysMedia} {
		t.Run(base, func(t *testing.T) {
			e := newEnv(t)
			ca, err := testca.New("image CA")
			if err != nil {
				t.Fatal(err)
			}
			certs := base + "/Certificates"
			media := decode(t, e.do(t, req{path: base, user: "alice"}))
			if diff := cmp.Diff(map[string]any{"@odata.id": certs}, media["Certificates"]); diff != "" {
				t.Errorf("VirtualMedia Certificates link (-want +got):\n%s", diff)
			}
			if media["VerifyCertificate"] != true {
				t.Errorf("VerifyCertificate = %v, want true by default", media["VerifyCertificate"])
			}

			post, _ := json.Marshal(map[string]string{"CertificateString": ca.PEM, "CertificateType": "PEM"})
			rec := e.do(t, req{method: http.MethodPost, path: certs, user: "alice", body: string(post)})
			if rec.Code != http.StatusCreated || rec.Header().Get("Location") != certs+"/1" {
				t.Fatalf("POST certificate: %d, Location %q: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
			}
			list := decode(t, e.do(t, req{path: certs, user: "alice"}))
			if diff := cmp.Diff([]any{map[string]any{"@odata.id": certs + "/1"}}, list["Members"]); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
			got := decode(t, e.do(t, req{path: certs + "/1", user: "alice"}))
			if got["CertificateString"] != ca.PEM || got["CertificateType"] != "PEM" ||
				got["Subject"].(map[string]any)["CommonName"] != "image CA" {
				t.Errorf("certificate: %v", got)
			}

			rec = e.do(t, req{method: http.MethodPost, path: certs, user: "alice", body: `{"CertificateString":"not a certificate","CertificateType":"PEM"}`})
			if diff := cmp.Diff(errorInfo{Status: 400, IDs: []string{"PropertyValueFormatError"}, Related: []string{"#/CertificateString"}}, errInfo(t, rec)); diff != "" {
				t.Errorf("bad PEM (-want +got):\n%s", diff)
			}
			pkcs7, _ := json.Marshal(map[string]string{"CertificateString": ca.PEM, "CertificateType": "PKCS7"})
			rec = e.do(t, req{method: http.MethodPost, path: certs, user: "alice", body: string(pkcs7)})
			if diff := cmp.Diff(errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/CertificateType"}}, errInfo(t, rec)); diff != "" {
				t.Errorf("PKCS7 (-want +got):\n%s", diff)
			}

			if rec := e.do(t, req{method: http.MethodDelete, path: certs + "/1", user: "alice"}); rec.Code != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
			}
			if rec := e.do(t, req{method: http.MethodDelete, path: certs + "/1", user: "alice"}); rec.Code != http.StatusNotFound {
				t.Errorf("DELETE again: %d, want 404", rec.Code)
			}
			if rec := e.do(t, req{path: certs + "/1", user: "alice"}); rec.Code != http.StatusNotFound {
				t.Errorf("GET deleted: %d, want 404", rec.Code)
			}
		})
	}
}

func TestPatchVerifyCertificate(t *testing.T) {
	e := newEnv(t)
	rec := e.do(t, req{path: mgrMedia, user: "alice"})
	tag := rec.Header().Get("ETag")
	if rec := e.do(t, req{method: http.MethodPatch, path: mgrMedia, user: "alice", body: `{"VerifyCertificate":false}`, header: map[string]string{"If-Match": tag}}); rec.Code != http.StatusNoContent {
		t.Fatalf("PATCH: %d %s", rec.Code, rec.Body)
	}
	rec = e.do(t, req{path: sysMedia, user: "alice"})
	if v := decode(t, rec)["VerifyCertificate"]; v != false {
		t.Errorf("VerifyCertificate after PATCH false = %v (through the system)", v)
	}
	if rec.Header().Get("ETag") == tag {
		t.Errorf("ETag %s did not change with VerifyCertificate", tag)
	}
	rec = e.do(t, req{method: http.MethodPatch, path: mgrMedia, user: "alice", body: `{"VerifyCertificate":true}`, header: map[string]string{"If-Match": tag}})
	if diff := cmp.Diff(errorInfo{Status: 412, IDs: []string{"PreconditionFailed"}}, errInfo(t, rec)); diff != "" {
		t.Errorf("stale If-Match (-want +got):\n%s", diff)
	}
	rec = e.do(t, req{method: http.MethodPatch, path: mgrMedia, user: "alice", body: `{"VerifyCertificate":"no"}`})
	if diff := cmp.Diff(errorInfo{Status: 400, IDs: []string{"PropertyValueTypeError"}, Related: []string{"#/VerifyCertificate"}}, errInfo(t, rec)); diff != "" {
		t.Errorf("string (-want +got):\n%s", diff)
	}
	if calls := e.fake.takeCalls(); len(calls) != 1 || calls[0] != "verify team-a.vm1 cd0 false" {
		t.Errorf("backend calls %v, want the one PATCH false", calls)
	}
}

// TestInsertCredentialsRedacted: the backend gets UserName and Password;
// neither the answer, the task, nor an error shows the password.
func TestInsertCredentialsRedacted(t *testing.T) {
	const pass = "pa55-w0rd-never-shown"
	e := newEnv(t)
	rec := e.do(t, req{method: http.MethodPost, path: mgrMedia + "/Actions/VirtualMedia.InsertMedia", user: "alice",
		body: `{"Image":"https://img.example/a.iso","UserName":"ironic","Password":"` + pass + `"}`})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("insert: %d %s", rec.Code, rec.Body)
	}
	if diff := cmp.Diff(system.MediaInsert{Image: "https://img.example/a.iso", UserName: "ironic", Password: pass,
		ActionURI: mgrMedia + "/Actions/VirtualMedia.InsertMedia"}, e.fake.lastInsert); diff != "" {
		t.Errorf("backend got (-want +got):\n%s", diff)
	}
	task := decode(t, e.do(t, req{path: rec.Header().Get("Location"), user: "alice"}))
	body := task["Payload"].(map[string]any)["JsonBody"].(string)
	if body != `{"Image":"https://img.example/a.iso","UserName":"******","Password":"******"}` {
		t.Errorf("task JsonBody %s", body)
	}
	rec2 := e.do(t, req{method: http.MethodPost, path: mgrMedia + "/Actions/VirtualMedia.InsertMedia", user: "alice",
		body: `{"Image":"ftp://img.example/a.iso","UserName":"ironic","Password":{"x":"` + pass + `"}}`})
	for name, text := range map[string]string{"insert answer": rec.Body.String(), "task": body, "error": rec2.Body.String()} {
		if strings.Contains(text, pass) {
			t.Errorf("%s shows the password: %s", name, text)
		}
	}
}

// TestMediaTrustScoped: a user of another namespace can neither read nor
// change a slot's trust (the attack: trusting a CA of one's own for
// someone else's imports, or turning their verification off).
func TestMediaTrustScoped(t *testing.T) {
	e := newEnv(t)
	ca, err := testca.New("attacker CA")
	if err != nil {
		t.Fatal(err)
	}
	post, _ := json.Marshal(map[string]string{"CertificateString": ca.PEM, "CertificateType": "PEM"})
	for _, r := range []req{
		{method: http.MethodPost, path: mgrMedia + "/Certificates", body: string(post)},
		{method: http.MethodPatch, path: mgrMedia, body: `{"VerifyCertificate":false}`},
		{method: http.MethodGet, path: sysMedia + "/Certificates"},
		{method: http.MethodDelete, path: sysMedia + "/Certificates/1"},
	} {
		r.user = "bob"
		if rec := e.do(t, r); rec.Code != http.StatusNotFound {
			t.Errorf("bob %s %s: %d, want 404", r.method, r.path, rec.Code)
		}
	}
	if calls := e.fake.takeCalls(); len(calls) != 0 {
		t.Errorf("writes from another namespace reached the backend: %v", calls)
	}
}
