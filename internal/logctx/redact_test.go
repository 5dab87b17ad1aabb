package logctx

import (
	"net/url"
	"testing"
)

// TestRedactURL: the whole userinfo goes, a token sent as the user name
// alone (issue 37 item 12) as much as a password.
func TestRedactURL(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"http://images.example/a.iso", "http://images.example/a.iso"},
		{"http://ironic:hunter2@images.example/a.iso", "http://xxxxx@images.example/a.iso"},
		{"https://ironic@images.example/a.iso", "https://xxxxx@images.example/a.iso"},
		{"http://ghp_secret@host/", "http://xxxxx@host/"},
		{"http://ghp_secret:@host/", "http://xxxxx@host/"},
		{"http://:ghp_secret@host/", "http://xxxxx@host/"},
		{"http://ironic:hun ter2@images.example/a.iso", "http://xxxxx@images.example/a.iso"},
		{"http://ironic:hunter2@images.example/%zz", "http://xxxxx@images.example/%zz"},
		{"http://ghp_secret@images.example/%zz", "http://xxxxx@images.example/%zz"},
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

func TestRedactedURL(t *testing.T) {
	u, err := url.Parse("https://ghp_secret@host/a.iso")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := RedactedURL(u), "https://xxxxx@host/a.iso"; got != want {
		t.Errorf("RedactedURL = %q, want %q", got, want)
	}
	if u.User.Username() != "ghp_secret" {
		t.Errorf("RedactedURL changed its argument: %v", u.User)
	}
}
