package backend_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/redfish-bridge/redfish-bridge/crds"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestURLPasswordNotLogged: an image URL or Boot.HttpBootUri carrying a
// password (user:pass@host) or a token as its user name (token@host,
// issue 37 item 12) is refused with 400, and the secret shows in no log
// line (Debug and up) and no answer; the refusal is logged, with the
// whole userinfo redacted.
func TestURLPasswordNotLogged(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a test cluster")
	}
	const pass = "Hunter2-in-the-url"
	var sink syncBuffer
	s := newStackLog(t, crds.Stock, nil, slog.New(slog.NewTextHandler(&sink, &slog.HandlerOptions{Level: slog.LevelDebug})))
	insert := s.uri + "/VirtualMedia/cd0/Actions/VirtualMedia.InsertMedia"
	for _, tt := range []struct{ name, method, uri, body string }{
		{"InsertMedia", http.MethodPost, insert, `{"Image":"http://ironic:` + pass + `@images.example/a.iso"}`},
		{"InsertMedia, URL that does not parse", http.MethodPost, insert, `{"Image":"http://ironic:` + pass + `@images.example/%zz"}`},
		{"InsertMedia, not http", http.MethodPost, insert, `{"Image":"ftp://ironic:` + pass + `@images.example/a.iso"}`},
		{"HttpBootUri", http.MethodPatch, s.uri, `{"Boot":{"HttpBootUri":"https://ironic:` + pass + `@images.example/boot.efi"}}`},
		{"HttpBootUri, URL that does not parse", http.MethodPatch, s.uri, `{"Boot":{"HttpBootUri":"https://ironic:` + pass + `@images.example/%zz"}}`},
		{"InsertMedia, token as the user name", http.MethodPost, insert, `{"Image":"http://` + pass + `@images.example/a.iso"}`},
		{"InsertMedia, token as the user name, not http", http.MethodPost, insert, `{"Image":"ftp://` + pass + `@images.example/a.iso"}`},
		{"HttpBootUri, token as the user name", http.MethodPatch, s.uri, `{"Boot":{"HttpBootUri":"https://` + pass + `@images.example/boot.efi"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := s.do(t, tt.method, tt.uri, tt.body, "")
			if rec.Code != http.StatusBadRequest {
				t.Errorf("%s %s: %d, want 400: %s", tt.method, tt.uri, rec.Code, rec.Body)
			}
			if strings.Contains(rec.Body.String(), pass) {
				t.Errorf("the answer shows the password: %s", rec.Body)
			}
		})
	}
	log := sink.String()
	if !strings.Contains(log, "request rejected") || !strings.Contains(log, "//xxxxx@images.example") {
		t.Errorf("no refusal with the URL redacted logged:\n%s", log)
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, pass) {
			t.Errorf("a log line shows the password: %s", line)
		}
	}
}
