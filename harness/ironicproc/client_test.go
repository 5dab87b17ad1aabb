package ironicproc

import "testing"

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
