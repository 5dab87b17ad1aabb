package ironicproc

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFaultOf(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"nested JSON string (Ironic's API)", `{"error_message": "{\"faultstring\": \"Node x could not be found.\", \"debuginfo\": null, \"faultcode\": \"Client\"}"}`, "Node x could not be found."},
		{"object", `{"error_message": {"faultstring": "boom"}}`, "boom"},
		{"plain string", `{"error_message": "not JSON inside"}`, "not JSON inside"},
		{"no error_message", `<html>502</html>`, `<html>502</html>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := faultOf([]byte(tt.body)); got != tt.want {
				t.Errorf("faultOf(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestVMediaRequests(t *testing.T) {
	type request struct{ Method, URI, Version, Body string }
	tests := []struct {
		name string
		call func(c *Client) error
		want request
	}{
		{"attach", func(c *Client) error { return c.AttachVMedia(t.Context(), "n1", "cdrom", "http://h/x.iso") },
			request{http.MethodPost, "/v1/nodes/n1/vmedia", "1.109", `{"device_type":"cdrom","image_url":"http://h/x.iso"}`}},
		{"detach cdrom", func(c *Client) error { return c.DetachVMedia(t.Context(), "n1", "cdrom") },
			request{http.MethodDelete, "/v1/nodes/n1/vmedia?device_types=cdrom", "1.109", ""}},
		{"detach all", func(c *Client) error { return c.DetachVMedia(t.Context(), "n1") },
			request{http.MethodDelete, "/v1/nodes/n1/vmedia", "1.109", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got request
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				got = request{r.Method, r.RequestURI, r.Header.Get("X-OpenStack-Ironic-API-Version"), string(body)}
				w.WriteHeader(http.StatusNoContent)
			}))
			defer srv.Close()
			c := NewClient(srv.URL)
			c.Version = "1.109"
			if err := tt.call(c); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}
