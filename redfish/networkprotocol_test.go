package redfish

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/redfish-bridge/redfish-bridge/system"
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
	checkServed(t, e, v, mgr+"/NetworkProtocol", "", map[string]any{
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

// ipmiPorts is a Protocols serving IPMI on the listed Systems' ports.
type ipmiPorts map[system.Key]int

func (p ipmiPorts) IPMIPort(key system.Key) (int, bool) {
	port, ok := p[key]
	return port, ok
}

// TestNetworkProtocolIPMI: with the IPMI endpoint running, a Manager's
// NetworkProtocol shows IPMI enabled on its System's served UDP port, and
// disabled without a port for a System it serves none for; without the
// endpoint no IPMI is shown (TestNetworkProtocol).
func TestNetworkProtocolIPMI(t *testing.T) {
	e := newEnv(t)
	v := newValidator(t)
	b := backendsOf(e.fake, e.auth)
	b.Protocols = ipmiPorts{{Namespace: "team-a", Name: "vm1"}: 6231}
	srv, ech, err := newServer(Config{ServiceUUID: "8a3d1f0e-1111-4222-8333-444455556666", Version: "1.0.0", Logger: slog.New(slog.DiscardHandler)}, b)
	if err != nil {
		t.Fatal(err)
	}
	withIPMI := &env{fake: e.fake, srv: srv, e: ech, auth: e.auth, revs: e.revs, clock: e.clock}
	for _, tt := range []struct {
		mgr  string
		want map[string]any
	}{
		{"/redfish/v1/Managers/team-a.vm1", map[string]any{"ProtocolEnabled": true, "Port": 6231.0}},
		{"/redfish/v1/Managers/team-a.vm2", map[string]any{"ProtocolEnabled": false, "Port": nil}},
	} {
		checkServed(t, withIPMI, v, tt.mgr+"/NetworkProtocol", "", map[string]any{"IPMI": tt.want})
	}
	body := checkServed(t, e, v, "/redfish/v1/Managers/team-a.vm1/NetworkProtocol", "", map[string]any{})
	if ipmi, ok := body["IPMI"]; ok {
		t.Errorf("without the IPMI endpoint: IPMI %v shown", ipmi)
	}
}
