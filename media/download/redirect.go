package download

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// maxRedirects is how many redirects an import follows (net/http's own
// default).
const maxRedirects = 10

// DowngradeError reports a redirect from https to http, which the import
// refuses: the image, and any credentials, would cross the network in
// clear text.
type DowngradeError struct {
	From, To string
}

func (e *DowngradeError) Error() string {
	return fmt.Sprintf("redirect from %s to %s refused: the import does not follow a redirect from https to http", e.From, e.To)
}

// checkRedirect is the import client's CheckRedirect: at most
// [maxRedirects], never from https to http.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	if prev := via[len(via)-1].URL; prev.Scheme == "https" && req.URL.Scheme != "https" {
		return &DowngradeError{From: logctx.RedactedURL(prev), To: logctx.RedactedURL(req.URL)}
	}
	return nil
}

// redactDoErr is err from an http.Client's Do with the URL it quotes
// redacted whole ([logctx.RedactURL]): net/http hides only a password, and
// a redirect's Location may carry a token as its user name.
func redactDoErr(err error) error {
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		ue.URL = logctx.RedactURL(ue.URL)
	}
	return err
}
