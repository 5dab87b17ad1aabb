package download

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateURL(t *testing.T) {
	tests := []struct {
		name, url string
		ok        bool
	}{
		{"http", "http://10.0.0.1/boot.iso", true},
		{"https with port and query", "https://images.example.com:8443/a/boot-1.iso?x=1&y=$(id)", true},
		{"empty", "", false},
		{"relative", "/boot.iso", false},
		{"ftp", "ftp://host/boot.iso", false},
		{"file", "file:///etc/passwd", false},
		{"nfs", "nfs://host/boot.iso", false},
		{"userinfo", "http://user:pw@host/boot.iso", false},
		{"user only", "http://user@host/boot.iso", false},
		{"no host", "http:///boot.iso", false},
		{"opaque", "http:boot.iso", false},
		{"space", "http://host/a b.iso", false},
		{"newline", "http://host/a\n.iso", false},
		{"too long", "http://host/" + strings.Repeat("a", 4100), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateURL(tt.url)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateURL(%q) = %v, want ok=%v", tt.url, err, tt.ok)
			}
			var iu *InvalidURLError
			if err != nil && !errors.As(err, &iu) {
				t.Fatalf("error %v is not an *InvalidURLError", err)
			}
		})
	}
}
