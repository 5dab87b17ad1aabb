package redfish

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNetworkProtocol: each Manager links its NetworkProtocol, which shows
// the protocol the request came in over (HTTPS, or HTTP under
// --insecure-http) enabled on the port of the listener it reached, the
// other one disabled, and nothing else; confined to the caller's scope.
func TestNetworkProtocol(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	const mgr = "/redfish/v1/Managers/team-a.vm1"
	checkServed(t, e, v, mgr, "", map[string]any{"NetworkProtocol": map[string]any{"@odata.id": mgr + "/NetworkProtocol"}})
	// e.do's requests come from no listener: the port is unknown.
	checkServed(t, e, v, mgr+"/NetworkProtocol", "PATCH", map[string]any{
		"HTTP":  map[string]any{"ProtocolEnabled": true, "Port": nil},
		"HTTPS": map[string]any{"ProtocolEnabled": false},
	})
	checkScoped(t, e, "/redfish/v1/Managers/", "/NetworkProtocol")

	for _, tt := range []struct {
		name        string
		tls         bool
		https, http map[string]any
	}{
		{"https", true, map[string]any{"ProtocolEnabled": true, "Port": 8443.0}, map[string]any{"ProtocolEnabled": false}},
		{"insecure-http", false, map[string]any{"ProtocolEnabled": false}, map[string]any{"ProtocolEnabled": true, "Port": 8443.0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.WithValue(t.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 8443})
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, mgr+"/NetworkProtocol", nil)
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			r.SetBasicAuth("admin", "admin-pw")
			rec := httptest.NewRecorder()
			e.e.ServeHTTP(rec, r)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET: %d %s", rec.Code, rec.Body)
			}
			body := decode(t, rec)
			v.validate(t, tt.name, body)
			got := map[string]any{"HTTPS": body["HTTPS"], "HTTP": body["HTTP"]}
			if diff := cmp.Diff(map[string]any{"HTTPS": tt.https, "HTTP": tt.http}, got); diff != "" {
				t.Errorf("protocols (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNetworkProtocolIPMISSH: with the IPMI endpoint and the SSH console
// running, a Manager's NetworkProtocol shows IPMI enabled on its System's
// served UDP port (disabled without a port for a System served none) and
// SSH on the console's port, each with ProtocolEnabled writable; the
// Manager's SerialConsole lists both. Without them neither is shown.
func TestNetworkProtocolIPMISSH(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	ssh := map[string]any{"ProtocolEnabled": true, "Port": 2222.0, "@Redfish.WriteableProperties": []any{"ProtocolEnabled"}}
	for _, tt := range []struct {
		mgr  string
		ipmi map[string]any
	}{
		{"/redfish/v1/Managers/team-a.vm1", map[string]any{"ProtocolEnabled": true, "Port": 6231.0, "@Redfish.WriteableProperties": []any{"ProtocolEnabled"}}},
		{"/redfish/v1/Managers/team-a.vm2", map[string]any{"ProtocolEnabled": false, "Port": nil, "@Redfish.WriteableProperties": []any{"ProtocolEnabled"}}},
	} {
		checkServed(t, e, v, tt.mgr+"/NetworkProtocol", "PATCH", map[string]any{"IPMI": tt.ipmi, "SSH": ssh})
		checkServed(t, e, v, tt.mgr, "", map[string]any{"SerialConsole": map[string]any{
			"ServiceEnabled": true, "MaxConcurrentSessions": 1.0, "ConnectTypesSupported": []any{"IPMI", "SSH"}}})
	}

	without := newEnvWith(t, func(b *Backends) { b.Protocols = nil })
	body := checkServed(t, without, v, "/redfish/v1/Managers/team-a.vm1/NetworkProtocol", "PATCH", map[string]any{})
	for _, name := range []string{"IPMI", "SSH"} {
		if p, ok := body[name]; ok {
			t.Errorf("without its part: %s %v shown", name, p)
		}
	}
	checkServed(t, without, v, "/redfish/v1/Managers/team-a.vm1", "", map[string]any{"SerialConsole": map[string]any{
		"ServiceEnabled": false, "MaxConcurrentSessions": 0.0, "ConnectTypesSupported": []any{}}})
}

// TestNetworkProtocolPatch: an Administrator switches a Manager's IPMI and
// SSH off and on with a PATCH of ProtocolEnabled (Ansible's
// SetNetworkProtocols body), the GET and the SerialConsole follow; an
// Operator gets 403, a System out of scope 404, and a bad body the
// service's Redfish error, with nothing switched.
func TestNetworkProtocolPatch(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	const np = "/redfish/v1/Managers/team-a.vm1/NetworkProtocol"
	patch := func(user, body string) *httptest.ResponseRecorder {
		t.Helper()
		return e.do(t, req{method: http.MethodPatch, path: np, user: user, body: body})
	}
	enabled := func(name string) any {
		t.Helper()
		return checkServed(t, e, v, np, "PATCH", map[string]any{})[name].(map[string]any)["ProtocolEnabled"]
	}
	if rec := patch("admin", `{"IPMI": {"ProtocolEnabled": false}}`); rec.Code != http.StatusNoContent {
		t.Fatalf("PATCH IPMI off: %d %s", rec.Code, rec.Body)
	}
	if got := enabled("IPMI"); got != false {
		t.Errorf("after IPMI off: IPMI ProtocolEnabled %v", got)
	}
	if got := enabled("SSH"); got != true {
		t.Errorf("after IPMI off: SSH ProtocolEnabled %v", got)
	}
	if rec := patch("admin", `{"SSH": {"ProtocolEnabled": false}}`); rec.Code != http.StatusNoContent {
		t.Fatalf("PATCH SSH off: %d %s", rec.Code, rec.Body)
	}
	checkServed(t, e, v, "/redfish/v1/Managers/team-a.vm1", "", map[string]any{"SerialConsole": map[string]any{
		"ServiceEnabled": false, "MaxConcurrentSessions": 1.0, "ConnectTypesSupported": []any{"IPMI", "SSH"}}})
	if rec := patch("admin", `{"IPMI": {"ProtocolEnabled": true}, "SSH": {"ProtocolEnabled": true}}`); rec.Code != http.StatusNoContent {
		t.Fatalf("PATCH both on: %d %s", rec.Code, rec.Body)
	}
	if a, b := enabled("IPMI"), enabled("SSH"); a != true || b != true {
		t.Errorf("after both on: IPMI %v, SSH %v", a, b)
	}
	want := []string{"protocols team-a.vm1 IPMI=false", "protocols team-a.vm1 SSH=false", "protocols team-a.vm1 IPMI=true SSH=true"}
	if diff := cmp.Diff(want, e.fake.calls); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		name, user, body string
		status           int
		ids              []string
	}{
		{"operator", "alice", `{"IPMI": {"ProtocolEnabled": false}}`, http.StatusForbidden, []string{"InsufficientPrivilege"}},
		{"out of scope", "bob", `{"IPMI": {"ProtocolEnabled": false}}`, http.StatusNotFound, []string{"ResourceMissingAtURI"}},
		{"not a boolean", "admin", `{"IPMI": {"ProtocolEnabled": "off"}}`, http.StatusBadRequest, []string{"PropertyValueTypeError"}},
		{"null", "admin", `{"SSH": {"ProtocolEnabled": null}}`, http.StatusBadRequest, []string{"PropertyValueTypeError"}},
		{"not an object", "admin", `{"IPMI": false}`, http.StatusBadRequest, []string{"PropertyValueTypeError"}},
		{"port", "admin", `{"IPMI": {"ProtocolEnabled": false, "Port": 7000}}`, http.StatusBadRequest, []string{"PropertyNotWritable"}},
		{"unknown in IPMI", "admin", `{"IPMI": {"Enabled": false}}`, http.StatusBadRequest, []string{"PropertyUnknown"}},
		{"a protocol not served", "admin", `{"Telnet": {"ProtocolEnabled": true}}`, http.StatusBadRequest, []string{"PropertyUnknown"}},
		{"the Redfish protocol", "admin", `{"HTTPS": {"ProtocolEnabled": false}}`, http.StatusBadRequest, []string{"PropertyNotWritable"}},
		{"not JSON", "admin", `{"IPMI": `, http.StatusBadRequest, []string{"MalformedJSON"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := patch(tt.user, tt.body)
			got := errInfo(t, rec)
			if got.Status != tt.status || !slices.Equal(got.IDs, tt.ids) {
				t.Errorf("PATCH %s as %s: %+v, want %d %v", tt.body, tt.user, got, tt.status, tt.ids)
			}
		})
	}
	if len(e.fake.calls) != len(want) {
		t.Errorf("refused PATCHes wrote: %v", e.fake.calls[len(want):])
	}

	without := newEnvWith(t, func(b *Backends) { b.Protocols = nil })
	rec := without.do(t, req{method: http.MethodPatch, path: np, user: "admin", body: `{"IPMI": {"ProtocolEnabled": false}}`})
	if got := errInfo(t, rec); got.Status != http.StatusBadRequest || !slices.Equal(got.IDs, []string{"PropertyUnknown"}) {
		t.Errorf("PATCH IPMI without the endpoint: %+v, want 400 PropertyUnknown", got)
	}
}
