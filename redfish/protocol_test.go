package redfish

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestConnectionClose sends two pipelined requests on one connection, the
// first with Connection: close: the answer must say so and the server must
// close the connection without answering the second (Debian sushy fails
// intermittently otherwise).
func TestConnectionClose(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.e)
	t.Cleanup(srv.Close)
	var d net.Dialer
	conn, err := d.DialContext(t.Context(), "tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	const two = "GET /redfish/v1/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\nOData-Version: 4.0\r\n\r\n" +
		"GET /redfish/v1/ HTTP/1.1\r\nHost: x\r\n\r\n"
	if _, err := io.WriteString(conn, two); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// resp.Close is set from the Connection: close header (which
	// ReadResponse then removes).
	if resp.StatusCode != http.StatusOK || !resp.Close {
		t.Errorf("status %d, Connection: close %t", resp.StatusCode, resp.Close)
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Errorf("after Connection: close the server sent %q (err %v), want EOF", rest, err)
	}
}

func TestKeepAliveWithoutClose(t *testing.T) {
	e := newEnv(t)
	rec := e.do(t, req{path: "/redfish/v1"})
	if got := rec.Header().Get("Connection"); got != "" {
		t.Errorf("Connection %q without the client asking", got)
	}
}

func TestRequestID(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name, sent string
		keep       bool
	}{
		{"generated", "", false},
		{"kept", "abc-123", true},
		{"unsafe replaced", "a\x01b", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req{path: "/redfish/v1/Nope"}
			if tt.sent != "" {
				r.header = map[string]string{HeaderRequestID: tt.sent}
			}
			got := e.do(t, r).Header().Get(HeaderRequestID)
			if got == "" || (got == tt.sent) != tt.keep {
				t.Errorf("request id %q (sent %q)", got, tt.sent)
			}
		})
	}
}
