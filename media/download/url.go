package download

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redfish-bridge/redfish-bridge/internal/logctx"
)

// maxURLLength bounds an image URL; it travels in a VM annotation and a pod
// argument.
const maxURLLength = 4096

// ValidateURL checks an image URL: absolute http or https with a host, no
// userinfo (credentials would land in a VM annotation and a pod spec), no
// control characters, and no literal IP the default [AddrPolicy] refuses
// (cloud metadata, link-local...). It returns an [*InvalidURLError], whose
// URL has its password redacted (it is logged and answered).
func ValidateURL(raw string) error {
	return AddrPolicy{}.ValidateURL(raw)
}

// ValidateURL is [ValidateURL] under policy p: also no literal IP p refuses.
func (p AddrPolicy) ValidateURL(raw string) error {
	bad := func(reason string) error { return &InvalidURLError{URL: logctx.RedactURL(raw), Reason: reason} }
	if raw == "" {
		return bad("empty")
	}
	if len(raw) > maxURLLength {
		return bad("longer than 4096 bytes")
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }) {
		return bad("contains spaces or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad(parseReason(raw, err))
	}
	if !u.IsAbs() {
		return bad("not absolute")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad("scheme must be http or https")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return bad("no host")
	}
	if u.User != nil {
		return bad("credentials in the URL are not accepted")
	}
	if why := p.checkHost(u.Hostname()); why != "" {
		return bad(why)
	}
	return nil
}

// parseReason is why raw does not parse, without raw itself (url.Error
// quotes it whole, password included); nothing more than that when raw
// holds an "@" (the parser's detail may quote part of a password).
func parseReason(raw string, err error) string {
	if strings.Contains(raw, "@") {
		return "not a valid URL"
	}
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// InvalidURLError reports an image URL the bridge refuses (Redfish 400
// PropertyValueFormatError on Image).
type InvalidURLError struct {
	URL    string
	Reason string
}

func (e *InvalidURLError) Error() string {
	return fmt.Sprintf("invalid image URL %q: %s", e.URL, e.Reason)
}
