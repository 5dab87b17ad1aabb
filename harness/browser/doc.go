// Package browser drives a real headless browser from tests: Debian's
// chromium (/usr/bin/chromium, or $CHROMIUM) over the DevTools protocol
// with github.com/chromedp/chromedp. Each [Browser] runs its own chromium
// process with a throwaway profile, accepts the test servers' self-signed
// certificates, and takes screenshots. Only tests import it.
package browser
