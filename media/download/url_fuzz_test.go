package download

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// FuzzValidateURL checks that ValidateURL never panics, that every refusal
// is an *InvalidURLError (its URL without a password), and that everything it accepts is an absolute
// http(s) URL with a host, no credentials, no control characters, within
// the length bound.
func FuzzValidateURL(f *testing.F) {
	for _, seed := range []string{
		"http://127.0.0.1:8080/boot.iso", "https://images.example.com/ipa.iso",
		"https://[2001:db8::1]:8443/a.iso", "http://example.com/a b.iso",
		"ftp://example.com/a.iso", "file:///etc/passwd", "http://user:pw@example.com/x.iso",
		"http:///x.iso", "http:example.com", "//example.com/x.iso", "http://example.com/\x00",
		"http://[::1", "HTTP://EXAMPLE.COM/X.ISO", "http://%41.com/", "http://:80/",
		"http://169.254.169.254/latest/meta-data/", "javascript:alert(1)", "",
		"http://example.com/" + strings.Repeat("a", 4100), "https://x/$(reboot)",
		"http://example.com/;rm -rf /", "http://example.com/a.iso#frag",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := ValidateURL(raw)
		if err != nil {
			var bad *InvalidURLError
			if !errors.As(err, &bad) || bad.URL != logctx.RedactURL(raw) || bad.Reason == "" {
				t.Fatalf("ValidateURL(%q) = %v, want an *InvalidURLError with a reason and the URL redacted", raw, err)
			}
			return
		}
		if len(raw) > maxURLLength {
			t.Fatalf("ValidateURL accepted %d bytes", len(raw))
		}
		if strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }) {
			t.Fatalf("ValidateURL(%q) accepted a control character or space", raw)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("ValidateURL(%q) accepted what url.Parse refuses: %v", raw, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("ValidateURL(%q) accepted scheme %q", raw, u.Scheme)
		}
		if u.Hostname() == "" || u.User != nil || u.Opaque != "" {
			t.Fatalf("ValidateURL(%q) accepted host %q user %v opaque %q", raw, u.Hostname(), u.User, u.Opaque)
		}
	})
}
