package logctx

import "testing"

func TestRedactURL(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"http://images.example/a.iso", "http://images.example/a.iso"},
		{"http://ironic:hunter2@images.example/a.iso", "http://ironic:xxxxx@images.example/a.iso"},
		{"https://ironic@images.example/a.iso", "https://ironic@images.example/a.iso"},
		{"http://ironic:hun ter2@images.example/a.iso", "http://xxxxx@images.example/a.iso"},
		{"http://ironic:hunter2@images.example/%zz", "http://xxxxx@images.example/%zz"},
		{"ironic:hunter2@images.example/\x7f", "xxxxx@images.example/\x7f"},
		{"not a url", "not a url"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			if got := RedactURL(tt.raw); got != tt.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}
