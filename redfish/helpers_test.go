package redfish

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// req is one test request. user, if set, authenticates with Basic and the
// test password; token with a session token.
type req struct {
	method, path, body string
	user, token        string
	ctype              string // default application/json when body is set
	header             map[string]string
	remote             string // TCP peer, default 192.0.2.1:1234
}

func (e *env) do(t *testing.T, r req) *httptest.ResponseRecorder {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	var body *strings.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	} else {
		body = strings.NewReader("")
	}
	hr := httptest.NewRequestWithContext(t.Context(), r.method, r.path, body)
	if r.body != "" {
		ct := r.ctype
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	} else if r.ctype != "" {
		hr.Header.Set("Content-Type", r.ctype)
	}
	if r.user != "" {
		hr.SetBasicAuth(r.user, r.user+"-pw")
	}
	if r.token != "" {
		hr.Header.Set(HeaderAuthToken, r.token)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	hr.RemoteAddr = "192.0.2.1:1234"
	if r.remote != "" {
		hr.RemoteAddr = r.remote
	}
	rec := httptest.NewRecorder()
	e.e.ServeHTTP(rec, hr)
	return rec
}

// get is an authenticated GET that must answer 200.
func (e *env) get(t *testing.T, user, path string) map[string]any {
	t.Helper()
	rec := e.do(t, req{path: path, user: user})
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s as %s: %d %s", path, user, rec.Code, rec.Body)
	}
	return decode(t, rec)
}

func decode(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("decode %q: %v", rec.Body, err)
	}
	return m
}

// errorInfo is the part of a Redfish error tests compare.
type errorInfo struct {
	Status  int
	IDs     []string // MessageIds without the registry prefix
	Related []string
}

func errInfo(t *testing.T, rec *httptest.ResponseRecorder) errorInfo {
	t.Helper()
	var body struct {
		Error struct {
			Code  string `json:"code"`
			Infos []struct {
				MessageID string   `json:"MessageId"`
				Related   []string `json:"RelatedProperties"`
			} `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("status %d, not an error body %q: %v", rec.Code, rec.Body, err)
	}
	got := errorInfo{Status: rec.Code}
	for _, i := range body.Error.Infos {
		got.IDs = append(got.IDs, strings.TrimPrefix(i.MessageID, baseRegistryID+"."))
		got.Related = append(got.Related, i.Related...)
	}
	if len(body.Error.Infos) == 0 || body.Error.Code != baseRegistryID+"."+got.IDs[0] {
		t.Errorf("error code %q does not match first message %v", body.Error.Code, got.IDs)
	}
	return got
}
