package redfish

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

func TestErrorAnswers(t *testing.T) {
	big := `{"Boot":{"BootSourceOverrideTarget":"` + strings.Repeat("x", maxBodyBytes) + `"}}`
	tests := []struct {
		name       string
		r          req
		backendErr error
		want       errorInfo
		wantHeader map[string]string
	}{
		{
			name: "unknown path",
			r:    req{path: "/redfish/v1/Nope", user: "admin"},
			want: errorInfo{Status: 404, IDs: []string{"ResourceMissingAtURI"}},
		},
		{
			name: "unknown sub-resource",
			r:    req{path: "/redfish/v1/Systems/team-a.vm1/Processors/CPU7", user: "admin"},
			want: errorInfo{Status: 404, IDs: []string{"ResourceMissingAtURI"}},
		},
		{
			name:       "method not allowed",
			r:          req{method: http.MethodDelete, path: "/redfish/v1/Systems/team-a.vm1", user: "admin"},
			want:       errorInfo{Status: 405, IDs: []string{"ActionNotSupported"}},
			wantHeader: map[string]string{"Allow": "OPTIONS, GET, HEAD, PATCH"},
		},
		{
			name:       "GET on an action",
			r:          req{path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", user: "admin"},
			want:       errorInfo{Status: 405, IDs: []string{"ActionNotSupported"}},
			wantHeader: map[string]string{"Allow": "OPTIONS, POST"},
		},
		{
			name: "form body",
			r:    req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", user: "admin", body: "a=b", ctype: "application/x-www-form-urlencoded"},
			want: errorInfo{Status: 415, IDs: []string{"UnrecognizedRequestBody"}},
		},
		{
			name: "body without content type",
			r:    req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", user: "admin", body: `{"ResetType":"On"}`, ctype: " "},
			want: errorInfo{Status: 415, IDs: []string{"UnrecognizedRequestBody"}},
		},
		{
			name: "too large",
			r:    req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", user: "admin", body: big},
			want: errorInfo{Status: 413, IDs: []string{"GeneralError"}},
		},
		{
			name: "json array",
			r:    req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", user: "admin", body: `[1]`},
			want: errorInfo{Status: 400, IDs: []string{"MalformedJSON"}},
		},
		{
			name:       "backend unavailable",
			r:          req{path: "/redfish/v1/Systems", user: "admin"},
			backendErr: fmt.Errorf("informer not synced: %w", ErrUnavailable),
			want:       errorInfo{Status: 503, IDs: []string{"ServiceTemporarilyUnavailable"}},
			wantHeader: map[string]string{"Retry-After": "5"},
		},
		{
			name:       "backend conflict",
			r:          req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", user: "admin", body: `{"ResetType":"On"}`},
			backendErr: fmt.Errorf("apply: %w", ErrConflict),
			want:       errorInfo{Status: 409, IDs: []string{"ResourceInUse"}},
		},
		{
			name:       "backend bad value",
			r:          req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1/SecureBoot", user: "admin", body: `{"SecureBootEnable":true}`},
			backendErr: &BadValueError{Property: "SecureBootEnable", Value: "true", Reason: "needs UEFI"},
			want:       errorInfo{Status: 400, IDs: []string{"PropertyValueNotInList"}, Related: []string{"#/SecureBootEnable"}},
		},
		{
			name:       "backend bad action parameter",
			r:          req{method: http.MethodPost, path: "/redfish/v1/Managers/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia", user: "admin", body: `{"Image":"http://10.0.0.1/a.iso"}`},
			backendErr: &BadValueError{Property: "Image", Value: "http://10.0.0.1/a.iso", Reason: "address not allowed"},
			want:       errorInfo{Status: 400, IDs: []string{"ActionParameterValueFormatError"}, Related: []string{"#/Image"}},
		},
		{
			name:       "backend not supported",
			r:          req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/VirtualMedia/cd0/Actions/VirtualMedia.EjectMedia", user: "admin"},
			backendErr: ErrNotSupported,
			want:       errorInfo{Status: 501, IDs: []string{"GeneralError"}},
		},
		{
			name:       "backend failure",
			r:          req{path: "/redfish/v1/Managers", user: "admin"},
			backendErr: errors.New("etcd on fire"),
			want:       errorInfo{Status: 500, IDs: []string{"InternalError"}},
		},
	}
	v := newValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.backendErr != nil {
				// Resolve the system first, then fail the write.
				if tt.r.method == "" || tt.r.method == http.MethodGet {
					e.fake.setErr(tt.backendErr)
				} else {
					e.fake.failWrites(tt.backendErr)
				}
			}
			rec := e.do(t, tt.r)
			if diff := cmp.Diff(tt.want, errInfo(t, rec)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			for k, want := range tt.wantHeader {
				if got := rec.Header().Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if strings.Contains(rec.Body.String(), "etcd") || strings.Contains(rec.Body.String(), "informer") {
				t.Errorf("internal detail leaked: %s", rec.Body)
			}
			v.validateAgainst(t, tt.name, errorSchemaURL, decode(t, rec))
		})
	}
}

// TestMethodNotAllowedMessage checks the 405 answer names the method in a
// sentence and lists the allowed ones in Allow.
func TestMethodNotAllowedMessage(t *testing.T) {
	e := newEnv(t)
	rec := e.do(t, req{method: http.MethodPatch, path: "/redfish/v1/Chassis/team-a.vm1", user: "admin", body: `{"IndicatorLED":"Lit"}`})
	if got := errInfo(t, rec); got.Status != http.StatusMethodNotAllowed {
		t.Fatalf("PATCH Chassis: %+v", got)
	}
	body := decode(t, rec)["error"].(map[string]any)
	want := "The action PATCH is not supported by the resource."
	if body["message"] != want {
		t.Errorf("message %q, want %q", body["message"], want)
	}
	if got := rec.Header().Get("Allow"); got != "OPTIONS, GET, HEAD" {
		t.Errorf("Allow %q", got)
	}
}

// TestNoIndicatorLED checks that a VM, which has no indicator LED, shows
// none (so Ironic lists no indicator for it) and that a PATCH of one is
// refused as an unknown property, which sushy raises as a BadRequestError.
func TestNoIndicatorLED(t *testing.T) {
	e := newEnv(t)
	for _, uri := range []string{"/redfish/v1/Systems/team-a.vm1", "/redfish/v1/Chassis/team-a.vm1"} {
		if v, ok := e.get(t, "admin", uri)["IndicatorLED"]; ok {
			t.Errorf("%s shows IndicatorLED %v", uri, v)
		}
	}
	rec := e.do(t, req{method: http.MethodPatch, path: "/redfish/v1/Systems/team-a.vm1", user: "admin", body: `{"IndicatorLED":"Lit"}`})
	want := errorInfo{Status: 400, IDs: []string{"PropertyUnknown"}, Related: []string{"#/IndicatorLED"}}
	if diff := cmp.Diff(want, errInfo(t, rec)); diff != "" {
		t.Errorf("PATCH IndicatorLED (-want +got):\n%s", diff)
	}
	if calls := e.fake.takeCalls(); len(calls) != 0 {
		t.Errorf("PATCH IndicatorLED wrote %v", calls)
	}
}

// TestConflictSaysWhy: a 409 ResourceInUse tells the client what is in use
// and what to do next: a backend's [ConflictError] its own Resolution, any
// other conflict (a write conflict that outlived the retries) to retry.
func TestConflictSaysWhy(t *testing.T) {
	env := newEnv(t)
	for _, tc := range []struct {
		name           string
		backendErr     error
		wantResolution string
	}{
		{"explained", fmt.Errorf("insert: %w", &ConflictError{Resolution: "Eject the media first."}), "Eject the media first."},
		{"write conflict", fmt.Errorf("apply: %w", ErrConflict), conflictResolution},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.fake.setErr(tc.backendErr)
			t.Cleanup(func() { env.fake.setErr(nil) })
			rec := env.do(t, req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", user: "admin", body: `{"ResetType":"On"}`})
			got, resolution := testutil.ReadRefusal(t, rec.Code, rec.Body.Bytes())
			if d := cmp.Diff(testutil.Refusal{Status: http.StatusConflict, ID: "ResourceInUse"}, got); d != "" {
				t.Errorf("refusal (-want +got):\n%s", d)
			}
			if resolution != tc.wantResolution {
				t.Errorf("Resolution %q, want %q", resolution, tc.wantResolution)
			}
		})
	}
}

// TestActionConflict: a Reset refused for now answers 409 with
// ActionParameterValueConflict (from Base 1.13.0: Base 1.9.3 lacks it) as
// error.code and first MessageId, ResetType and its value as arguments, and
// the backend's Resolution: what Ironic 39 retries a power-on on.
func TestActionConflict(t *testing.T) {
	env := newEnv(t)
	env.fake.setErr(fmt.Errorf("power on: %w", &ActionConflictError{Parameter: "ResetType", Value: "On", Resolution: "Retry the request."}))
	t.Cleanup(func() { env.fake.setErr(nil) })
	rec := env.do(t, req{method: http.MethodPost, path: "/redfish/v1/Systems/team-a.vm1/Actions/ComputerSystem.Reset", user: "admin", body: `{"ResetType":"On"}`})
	got, resolution := testutil.ReadRefusal(t, rec.Code, rec.Body.Bytes())
	want := testutil.Refusal{Status: http.StatusConflict, ID: "Base.1.13.0.ActionParameterValueConflict", Args: []string{"ResetType", "On"}, Related: []string{"#/ResetType"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("refusal (-want +got):\n%s", d)
	}
	if resolution != "Retry the request." {
		t.Errorf("Resolution %q", resolution)
	}
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error.Code != want.ID || body.Error.Message != "The parameter 'ResetType' with the requested value of 'On' does not meet the constraints of the implementation." {
		t.Errorf("error.code %q, message %q", body.Error.Code, body.Error.Message)
	}
}
