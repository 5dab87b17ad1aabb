package browser_test

import (
	"bytes"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/redfish-bridge/redfish-bridge/harness/browser"
)

const page = `<!doctype html><html><head><meta name="viewport" content="width=device-width"><title>t</title><script src="/app.js"></script></head>
<body><button id="b">press</button><p id="out">idle</p></body></html>`

const script = `document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('b').addEventListener('click', () => {
    document.getElementById('out').textContent = 'pressed ' + sessionStorage.getItem('k');
  });
  sessionStorage.setItem('k', 'v');
});`

// TestBrowser drives chromium against a self-signed HTTPS server: it
// loads a page, runs its script, clicks, reads the DOM and takes a PNG.
func TestBrowser(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/app.js" {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write([]byte(script))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	b := browser.Start(t, browser.Options{Phone: true})
	if err := b.Do(t.Context(),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(chromedp.ID("b")),
		browser.WaitFor(`document.getElementById('out').textContent.startsWith('pressed')`),
	); err != nil {
		t.Fatal(err)
	}
	out, err := browser.Run(t.Context(), b, chromedp.Text(chromedp.ID("out")))
	if err != nil {
		t.Fatal(err)
	}
	if out != "pressed v" {
		t.Errorf("page says %q, want %q", out, "pressed v")
	}
	shot := filepath.Join(t.TempDir(), "shot.png")
	if err := b.Screenshot(t.Context(), shot); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if w := img.Bounds().Dx(); w != 390 {
		t.Errorf("screenshot is %d px wide, want the window's 390", w)
	}

	// A second tab has its own sessionStorage (its own Redfish session).
	if err := b.Do(t.Context(), chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem('only', 'first')`)); err != nil {
		t.Fatal(err)
	}
	tab := b.Tab(t)
	if err := tab.Do(t.Context(), chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	got, err := browser.Run(t.Context(), tab, chromedp.Evaluate[string](`String(sessionStorage.getItem('only'))`))
	if err != nil {
		t.Fatal(err)
	}
	if got != "null" {
		t.Errorf("new tab's sessionStorage holds %q", got)
	}
}
